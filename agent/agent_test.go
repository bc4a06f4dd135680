package agent

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/ccsim"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/target/doca"
)

const rlccXGB = "../testdata/models/rlcc_xgb.json"

// compiles are the tests' compile directories, each compiled once a package run.
var compiles sync.Map // key → *compileOnce

type compileOnce struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	compiles.Range(func(_, v any) bool { os.RemoveAll(v.(*compileOnce).dir); return true })
	os.Exit(code)
}

// compiled is rlcc_xgb compiled for CCsim's base RTT (8192 ns), for nicc's ABI or for sdk.
func compiled(t *testing.T, sdk string) string {
	t.Helper()
	v, _ := compiles.LoadOrStore(sdk, &compileOnce{})
	c := v.(*compileOnce)
	c.once.Do(func() {
		if c.dir, c.err = os.MkdirTemp("", "nicc-agent-test-"); c.err != nil {
			return
		}
		p := nicsdk.DefaultParams()
		p.BaseRTT = CCsimBaseRTTNs
		opt := compiler.CompileOptions{Model: rlccXGB, Form: "walk", Out: c.dir, Vectors: 2000,
			Params: p, ParamSources: golden.FlagSources([]string{"rlcc-base-rtt"})}
		if sdk == "doca" {
			opt.SDK = doca.Target
		}
		_, c.err = compiler.Compile(opt)
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.dir
}

// TestAgentFlows: each (host, tag) is its own flow on its host's engine, its first decision
// on a new flow's context, later ones on what the last left, the rate CCsim reports in force.
func TestAgentFlows(t *testing.T) {
	t.Parallel()
	dir := compiled(t, "nicc")
	a, err := New(Options{Sim: lab.SimOptions{Policy: dir}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Sim: lab.SimOptions{Policy: dir, Golden: true}})
	if err != nil {
		t.Fatal(err)
	}
	// Two hosts with the same tag are two flows; deep congestion at line rate decreases, an
	// empty path at a low rate increases.
	reqs := []ccsim.Request{
		{RTTNs: 80_000, RateFxp20: nicsdk.LineRate, IntervalNs: 10_000, Host: 1, FlowTag: 0},
		{RTTNs: 8_100, RateFxp20: nicsdk.LineRate / 64, IntervalNs: 10_000, Host: 2, FlowTag: 0},
		{RTTNs: 80_000, RateFxp20: nicsdk.LineRate / 2, IntervalNs: 10_000, Host: 1, FlowTag: 0},
	}
	var ms []uint32
	for _, r := range reqs {
		d, err := a.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		dg, err := g.Decide(r)
		if err != nil || dg.MultiplierQ16 != d.MultiplierQ16 {
			t.Fatalf("%s: golden %d (%v), firmware %d", r.Flow(), dg.MultiplierQ16, err, d.MultiplierQ16)
		}
		ms = append(ms, d.MultiplierQ16)
	}
	if ms[0] >= ccsim.Q16One || ms[1] <= ccsim.Q16One || ms[2] >= ccsim.Q16One {
		t.Fatalf("multipliers %v: want a decrease deep in congestion, an increase on an empty path", ms)
	}
	r := a.Finish()
	if r.Flows != 2 || r.Hosts != 2 || r.Decisions != 3 || r.RateDrift != 1 {
		// The third request's rate (1/2) is not the first answer's (line rate × ms[0]).
		t.Fatalf("report %+v: want 2 flows on 2 hosts, 3 decisions, 1 rate drift", r)
	}
}

// TestAgentServes: the agent answers over CCsim's protocol, a fixed multiplier or the float
// teacher, and refuses what cannot answer.
func TestAgentServes(t *testing.T) {
	t.Parallel()
	fixed, err := New(Options{Multiplier: 58982})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Run, 1)
	go func() {
		run, err := Serve(context.Background(), fixed, ln, ccsim.ServeOptions{MaxRequests: 2}, nil)
		if err != nil {
			t.Error(err)
		}
		done <- run
	}()
	for i := range 2 {
		m, err := ccsim.Ask(ln.Addr().String(), ccsim.Request{RTTNs: 9000, RateFxp20: nicsdk.LineRate, FlowTag: uint32(i)}, 5*time.Second)
		if err != nil || m != 58982 {
			t.Fatalf("answer %d, %v; want 58982", m, err)
		}
	}
	if run := <-done; run.Decisions != 2 || run.Flows != 2 {
		t.Fatalf("%+v", run)
	}

	teacher, err := New(Options{Sim: lab.SimOptions{Policy: "../testdata/models/rlcc_adpg.json"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := teacher.Decide(ccsim.Request{RTTNs: 80_000, RateFxp20: nicsdk.LineRate})
	if err != nil || d.MultiplierQ16 >= ccsim.Q16One || d.MultiplierQ16 < nicsdk.AMin || d.Cycles != 0 {
		t.Fatalf("the teacher deep in congestion: %+v, %v; want a decrease, no cycles", d, err)
	}
	for _, bad := range []Options{{Sim: lab.SimOptions{Policy: "swift"}}, {Multiplier: 1, Sim: lab.SimOptions{Policy: "x.json"}}} {
		if _, err := New(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestAgentDOCA: a DOCA program answers as a NIC's engine, each host its own, with the
// multipliers of its action map and its cycles.
func TestAgentDOCA(t *testing.T) {
	t.Parallel()
	dir := compiled(t, "doca")
	a, err := New(Options{Sim: lab.SimOptions{Policy: dir, SDK: doca.Target}})
	if err != nil {
		t.Fatal(err)
	}
	for i, rtt := range []uint32{8100, 8100, 30_000, 9_000, 60_000, 8_500} {
		for host := range uint32(3) {
			r := ccsim.Request{RTTNs: rtt + host, RateFxp20: nicsdk.LineRate >> (i % 5), IntervalNs: 10_000, Host: host, FlowTag: 4}
			d, err := a.Decide(r)
			if err != nil {
				t.Fatal(err)
			}
			if d.Cycles == 0 || d.MultiplierQ16 < nicsdk.AMin || d.MultiplierQ16 > nicsdk.AMax {
				t.Fatalf("%s: %+v: want the program's multiplier and its cycles", r.Flow(), d)
			}
		}
	}
	if r := a.Finish(); r.Hosts != 3 || r.Flows != 3 || r.Cycles == nil || r.Cycles.Decisions != 18 {
		t.Fatalf("%+v: want 3 flows, each on its host's engine, 18 decisions timed", r)
	}
}

// TestAgentBounds: requests name as many flows as they like; the agent keeps at most
// MaxHostFlows on one host's engine and says so.
func TestAgentBounds(t *testing.T) {
	t.Parallel()
	a, err := New(Options{Sim: lab.SimOptions{Policy: compiled(t, "nicc")}})
	if err != nil {
		t.Fatal(err)
	}
	r := ccsim.Request{RTTNs: 9000, RateFxp20: nicsdk.LineRate, IntervalNs: 10_000, Host: 3}
	for tag := range uint32(MaxHostFlows) {
		r.FlowTag = tag
		if _, err := a.Decide(r); err != nil {
			t.Fatalf("flow %d: %v", tag, err)
		}
	}
	r.FlowTag = MaxHostFlows
	if _, err := a.Decide(r); err == nil || err.Error() != "more than 16384 flows on host 3" {
		t.Fatalf("flow %d on one host: %v; want the bound named", MaxHostFlows, err)
	}
}
