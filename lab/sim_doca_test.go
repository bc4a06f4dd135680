package lab

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/simfw"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/abi"
	"github.com/nicc-dev/nicc/target/doca"
)

// docaSimNet is the closed-loop tests' network: short, seeded, ±100 ppm clocks (so that the
// NICs do not decide in lockstep and their engine states are told apart), and a 512 KiB
// buffer, so that the flows leave line rate's full queue and decide often in 3 ms.
var docaSimNet = netsim.Config{DurationNs: 3_000_000, Seed: 5, ClockPPM: StandardClockPPM, BufferBytes: 512 << 10}

// The DOCA program in the loop equals the nicc firmware of the same compile in the loop, bit
// for bit, at a fixed latency (they compute the same rates): for trees, and for an LSTM
// (state words in the context). Its counters agree with the events the loop gave it. The
// LSTM's compile is checked here as compiler's TestCompileDOCA checks the others: the triad
// passed over the DOCA program with parameter changes among the events, and its entry is
// bounded within 10% of nicc_on_event's WCET.
func TestSimDOCAEqualsFirmware(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key     string
		compile func(*testing.T) (*artifact.CompileReport, string)
	}{{"doca-xgb", docaReport}, {"doca-lstm", docaLSTMReport}} {
		t.Run(c.key, func(t *testing.T) {
			t.Parallel()
			r, dir := c.compile(t)
			if c.key == "doca-lstm" {
				d := r.DOCA
				if d == nil || d.Mismatches != 0 || d.UBSan != "clean" || len(d.Compared) != 4 || d.Events < 4000 || d.SetParams == 0 ||
					d.Refused == 0 || d.Refused == d.SetParams || d.Decisions == 0 {
					t.Fatalf("DOCA verify of the LSTM: %+v", d)
				}
				if b := d.Budget; b == nil || b.Entry != nicsdk.DOCAEntryAlgo || d.MaxCycles > b.WCETCycles || d.HandlerWCETCycles != r.Budget.WCETCycles || d.WCETRatio > 1.10 {
					t.Errorf("DOCA budget of the LSTM %+v: measured max %d, ratio %.3f to nicc_on_event's %d", b, d.MaxCycles, d.WCETRatio, d.HandlerWCETCycles)
				}
			}
			run := func(sdk target.Target) *SimReport {
				// A DOCA program's flows learn their base RTT (nothing provisions their
				// contexts): the nicc firmware's do the same here, so both run one world.
				r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 8, Policy: dir, SDK: sdk, LatencyNs: 500, Net: docaSimNet, learnBaseRTT: true})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			fw, doca := run(abi.Target), run(doca.Target)
			a, b := *fw.Result, *doca.Result
			a.Controller, b.Controller = "", ""
			if a.Decisions == 0 || !reflect.DeepEqual(a, b) {
				t.Errorf("nicc firmware and DOCA program in the loop differ:\n%+v\n%+v", a, b)
			}
			d := doca.DOCA
			if d == nil || fw.DOCA != nil {
				t.Fatalf("DOCA report %+v with --sdk doca, %+v without", d, fw.DOCA)
			}
			// Most decisions away from min and line rate, or the runs would agree whatever
			// the policy did.
			if d.NICs != 9 || d.Decisions == 0 || d.Decisions != uint64(d.RTTEvents) || d.Events != d.RTTEvents || d.Decisions < uint64(b.Decisions) ||
				d.Clamps >= d.Decisions/2 {
				t.Errorf("DOCA counters %+v; the window holds %d decisions", d, b.Decisions)
			}
			// Every decision ran in fwsim, within its entry's WCET.
			if c := doca.Cycles; c == nil || c.Decisions != d.Events || c.Max == 0 || c.Max > r.DOCA.Budget.WCETCycles {
				t.Errorf("DOCA decisions' cycles %+v, %d events, WCET %d", c, d.Events, r.DOCA.Budget.WCETCycles)
			}
			if c := fw.Cycles; c == nil || c.Decisions == 0 || c.Max > r.Budget.WCETCycles {
				t.Errorf("nicc firmware decisions' cycles %+v, WCET %d", c, r.Budget.WCETCycles)
			}
			if !strings.Contains(doca.Decides, nicsdk.DOCAEntryAlgo) || !strings.Contains(doca.Decides, "the compiled parameters") {
				t.Errorf("decides %q", doca.Decides)
			}
			t.Logf("8→1, 500 ns: SU %.2f%%, QL %.2f µs, %d decisions in the window; DOCA counters %d decisions, %d clamps",
				b.Utilization, b.QueueMeanUs, b.Decisions, d.Decisions, d.Clamps)
		})
	}
}

// --theory compares a DOCA program given a target and beta at run time with Eq. 2 under
// those, not under the compiled ones.
func TestSimTheoryDOCAParams(t *testing.T) {
	t.Parallel()
	_, dir := docaReport(t)
	p, err := golden.NewParams([]float64{0.032, 1, 12})
	if err != nil {
		t.Fatal(err)
	}
	set := []DOCASetting{{"rlcc-target", 0.032}, {"rlcc-beta", 1}}
	r, err := SimTheory(SimOptions{Policy: dir, SDK: doca.Target, DOCASet: set, Params: p, LatencyNs: 500, Net: docaSimNet}, []int{4})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Target-0.032) > 1e-4 || r.Beta != 1 || len(r.Points) != 1 || math.Abs(r.Points[0].Theory-(r.Target*2+r.Beta)) > 1e-12 {
		t.Errorf("theory under target %v, beta %v: %+v (want 0.032 and 1)", r.Target, r.Beta, r.Points)
	}
}

// Run-time parameters set through doca_pcc_dev_user_set_algo_params: the run equals the
// golden model in nicsdk's runtime under those parameters, and differs from the compiled
// parameters' run.
func TestSimDOCARuntimeParams(t *testing.T) {
	t.Parallel()
	_, dir := docaReport(t)
	cp, err := compiler.OpenCompiled(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := fwsim.LookupProfile(cp.Report.Budget.Core.Name)
	if err != nil {
		t.Fatal(err)
	}
	scen, err := netsim.ManyToOne(8)
	if err != nil {
		t.Fatal(err)
	}
	base := cp.Params()
	for _, set := range [][]DOCASetting{
		{{"rlcc-target", 0.032}},
		{{"rlcc-scale", 20}, {"rlcc-target", 0.032}, {"rlcc-beta", 1}},
	} {
		vals := map[string]float64{"rlcc-target": 0.064, "rlcc-beta": 1.5, "rlcc-scale": 12}
		for _, s := range set {
			vals[s.Flag] = s.Given
		}
		p, err := golden.NewParams([]float64{vals["rlcc-target"], vals["rlcc-beta"], vals["rlcc-scale"]})
		if err != nil {
			t.Fatal(err)
		}
		run, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 8, Policy: dir, SDK: doca.Target, DOCASet: set, Params: p,
			LatencyNs: 500, Net: docaSimNet})
		if err != nil {
			t.Fatal(err)
		}
		want := base
		want.Target, want.Beta, want.Scale = p.Target, p.Beta, p.Scale
		if want == base {
			t.Fatalf("%v: the parameters are the compiled ones", set)
		}
		cfg := docaSimNet
		cfg.Threads, cfg.LatencyNs = prof.Threads, 500
		golden, err := netsim.Run(scen, simfw.Golden(cp, want), cfg)
		if err != nil {
			t.Fatal(err)
		}
		compiled, err := netsim.Run(scen, simfw.Golden(cp, base), cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, g, c := *run.Result, *golden, *compiled
		a.Controller, g.Controller, c.Controller = "", "", ""
		if a.Decisions == 0 || !reflect.DeepEqual(a, g) {
			t.Errorf("%v: the DOCA program and the golden model under the same parameters differ:\n%+v\n%+v", set, a, g)
		}
		if reflect.DeepEqual(a, c) {
			t.Errorf("%v: the run equals the compiled parameters' run: the parameters did not reach the program", set)
		}
		if len(run.DOCA.SetParams) != len(set) || !strings.Contains(run.Decides, nicsdk.DOCAEntrySetParams+": target 0.032") {
			t.Errorf("%v: set %+v, decides %q", set, run.DOCA.SetParams, run.Decides)
		}
		t.Logf("%v: QL %.2f µs (compiled parameters %.2f µs), SU %.2f%%", set, a.QueueMeanUs, c.QueueMeanUs, a.Utilization)
	}
}

// Parameters set at a simulated time on the live NICs: the run's trace is the compiled
// parameters' run's up to that time and differs after it, and the report says when.
func TestSimDOCASetAt(t *testing.T) {
	t.Parallel()
	_, dir := docaReport(t)
	p, err := golden.NewParams([]float64{0.016})
	if err != nil {
		t.Fatal(err)
	}
	const atNs = 1_500_000
	net := docaSimNet
	net.TraceNs = 10_000
	run := func(opt SimOptions) *SimReport {
		opt.Scenario, opt.Flows, opt.Policy, opt.SDK, opt.LatencyNs, opt.Net = "many-to-one", 8, dir, doca.Target, 500, net
		r, err := Sim(opt)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	compiled := run(SimOptions{})
	set := run(SimOptions{DOCASet: []DOCASetting{{"rlcc-target", 0.016}}, Params: p, DOCASetAtNs: atNs})
	a, b := compiled.Trace, set.Trace
	if len(a.TimesUs) != len(b.TimesUs) || len(a.TimesUs) != 301 {
		t.Fatalf("traces of %d and %d samples; want 301", len(a.TimesUs), len(b.TimesUs))
	}
	firstDiff := -1
	for k, us := range b.TimesUs {
		same := a.QueueKB[k] == b.QueueKB[k]
		for f := range b.Flows {
			same = same && a.FlowGbps[f][k] == b.FlowGbps[f][k]
		}
		if !same && us <= atNs/1000 {
			t.Fatalf("the runs differ at %v µs, before the parameters were set at %d µs", us, atNs/1000)
		}
		if !same && firstDiff < 0 {
			firstDiff = k
		}
	}
	if firstDiff < 0 {
		t.Fatal("setting target 0.016 at 1.5 ms changed nothing")
	}
	if d := set.DOCA; d.SetAtNs != atNs || len(d.SetParams) != 1 || !strings.Contains(set.Decides, "the compiled parameters until 1500 µs, then set on every NIC through "+nicsdk.DOCAEntrySetParams+": target 0.016") {
		t.Errorf("report: set at %d ns, %+v, decides %q", d.SetAtNs, d.SetParams, set.Decides)
	}
	var text strings.Builder
	if err := set.WriteText(&text); err != nil || !strings.Contains(text.String(), "the parameters were set at 1500 µs, by its start") {
		t.Errorf("text report (%v):\n%s", err, text.String())
	}
	t.Logf("the runs differ from %v µs on (target 0.016 set at %d µs); window QL %.2f µs → %.2f µs, SU %.2f%% → %.2f%%",
		b.TimesUs[firstDiff], atNs/1000, compiled.QueueMeanUs, set.QueueMeanUs, compiled.Utilization, set.Utilization)
}

// --sdk doca refuses a compile without a DOCA program, --golden, a policy that is not a
// compile, a parameter compiled into the program, and a parameter the program refuses (also
// one set at a time, before the run); --set-at without --sdk doca, without a parameter to
// set, or outside the run.
func TestSimDOCARefusals(t *testing.T) {
	t.Parallel()
	plain := compiledForSim(t, rlccXGB, false)
	_, docaDir := docaReport(t)
	big, err := golden.NewParams([]float64{1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  SimOptions
		want string
	}{
		{SimOptions{Policy: plain}, "compiled without --sdk doca: it has no DOCA program"},
		{SimOptions{Policy: docaDir, Golden: true}, "--sdk doca runs the compile's DOCA program, --golden its golden model"},
		{SimOptions{Policy: "swift"}, `--sdk doca takes a compile output directory (nicc compile --sdk doca), not "swift"`},
		{SimOptions{Policy: docaDir, DOCASet: []DOCASetting{{"rlcc-min-rate", 0.01}}}, "--rlcc-min-rate 0.01: compiled into the DOCA program"},
		{SimOptions{Policy: docaDir, Params: big, DOCASet: []DOCASetting{{"rlcc-target", 1}}},
			"--rlcc-target 1: the DOCA program refused it (doca_pcc_dev_user_set_algo_params returned DOCA_PCC_DEV_STATUS_FAIL)"},
		// Refused before the run, not half way through it.
		{SimOptions{Policy: docaDir, Params: big, DOCASet: []DOCASetting{{"rlcc-target", 1}}, DOCASetAtNs: 50_000},
			"--rlcc-target 1: the DOCA program refused it"},
		{SimOptions{Policy: docaDir, DOCASetAtNs: 50_000}, "--set-at has nothing to set"},
		{SimOptions{Policy: docaDir, DOCASet: []DOCASetting{{"rlcc-target", 0.016}}, DOCASetAtNs: 100_000}, "--set-at 100 µs: want a time inside the run, (0, the duration 100 µs)"},
		{SimOptions{Policy: docaDir, DOCASet: []DOCASetting{{"rlcc-target", 0.016}}, DOCASetAtNs: -1}, "--set-at -0.001 µs: want a time inside the run"},
	} {
		c.opt.Scenario, c.opt.Net = "many-to-one", netsim.Config{DurationNs: 100_000}
		c.opt.SDK = doca.Target
		_, err := Sim(c.opt)
		var stopped *budget.CheckError // a run stopped half way, or the program's fault: exit 1
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || errors.As(err, &stopped) {
			t.Errorf("%+v: %v; want bad input, one line containing %q", c.opt, err, c.want)
		}
	}
	nicc := SimOptions{Scenario: "many-to-one", Policy: docaDir, DOCASet: []DOCASetting{{"rlcc-target", 0.016}}, DOCASetAtNs: 50_000}
	if _, err := Sim(nicc); err == nil || err.Error() != "--set-at sets a DOCA program's run-time parameters on the live NICs: it takes --sdk doca" {
		t.Errorf("--set-at with --sdk nicc: %v", err)
	}
}

// nicc diff --closed-loop --sdk doca puts the DOCA program against the teacher: at a fixed
// latency its half of the table is the nicc firmware's, bit for bit.
func TestDiffClosedLoopDOCA(t *testing.T) {
	t.Parallel()
	_, dir := docaReport(t)
	docaRep, err := DiffClosedLoop(ClosedLoopOptions{Teacher: rlccXGB, Against: dir, SDK: doca.Target, LatencyNs: 500,
		Runs: []ClosedLoopRun{{"many-to-one", 8}}, Net: docaSimNet})
	if err != nil {
		t.Fatal(err)
	}
	// The nicc firmware in the same world: its flows learn their base RTT as the DOCA
	// program's do (closed loop with --sdk nicc would provision the path's).
	fw, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 8, Policy: dir, LatencyNs: 500, Net: docaSimNet, learnBaseRTT: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := *fw.Result, *docaRep.Rows[0].Compiled
	a.Controller, b.Controller = "", ""
	if a.Decisions == 0 || !reflect.DeepEqual(a, b) || !strings.Contains(docaRep.Decides, "the DOCA program") {
		t.Errorf("closed loop: DOCA program (%s) and nicc firmware differ:\n%+v\n%+v", docaRep.Decides, b, a)
	}
}
