package netsim

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/nicsdk"
)

func manyToOne(t testing.TB, n int) Scenario {
	t.Helper()
	s, err := ManyToOne(n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t testing.TB, s Scenario, c Controller, cfg Config) *Result {
	t.Helper()
	r, err := Run(s, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// within fails unless got is within rel of want.
func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g ± %.2g%%", what, got, want, 100*rel)
	}
}

// One flow alone at line rate fills the link and leaves the queue empty.
func TestOneFlowFillsTheLink(t *testing.T) {
	r := run(t, manyToOne(t, 1), FixedRate{nicsdk.LineRate}, Config{})
	if r.Utilization < 95 || r.DropGbps != 0 || r.QueueP99Us > 0.01 || r.QueueMeanUs != 0 {
		t.Errorf("one flow: SU %.2f%%, DR %.3g Gb/s, QL mean %.3g µs p99 %.3g µs; want SU >= 95%%, no drops, an empty queue",
			r.Utilization, r.DropGbps, r.QueueMeanUs, r.QueueP99Us)
	}
	t.Logf("one flow: SU %.2f%%, goodput %.4f, QL %.3g µs", r.Utilization, r.Goodput, r.QueueMeanUs)
}

// Four flows at half the line rate each fill the buffer, wait buffer ÷ link rate in it, and
// lose exactly the data the port cannot send: the offered data minus what the capacity left
// after the probes (never dropped; one a flow in flight, so one a flow an RTT) carries.
func TestOverloadFillsTheBufferAndDropsTheExcess(t *testing.T) {
	cfg := Defaults
	r := run(t, manyToOne(t, 4), FixedRate{nicsdk.LineRate / 2}, Config{})
	perFlow := cfg.LinkGbps / 2
	waitUs := float64(cfg.BufferBytes) * 8 / (cfg.LinkGbps * 1e3)
	probeGbps := 4 * float64(cfg.ProbeBytes) * 8 / ((waitUs + r.BaseRTTUs) * 1e3)
	within(t, "drop rate (Gb/s)", r.DropGbps, 4*perFlow-(cfg.LinkGbps-probeGbps), 0.005)
	within(t, "queue latency (µs)", r.QueueMeanUs, waitUs, 0.01)
	within(t, "utilization (%)", r.Utilization, 100, 0.001)
}

// An engine slower than its events drops the excess: one thread, no queue to speak of, a
// decision of 20 µs against an RTT probe every RTT or so (counted by a run whose decisions take
// no time: a fixed rate's probes do not depend on the decisions).
func TestSlowEngineDropsEvents(t *testing.T) {
	arrivals := float64(run(t, manyToOne(t, 1), FixedRate{nicsdk.LineRate}, Config{}).Decisions)
	cfg := Config{Threads: 1, QueueDepth: 1, LatencyNs: 20_000}
	r := run(t, manyToOne(t, 1), FixedRate{nicsdk.LineRate}, cfg)
	d := Defaults
	window := float64(d.DurationNs-d.DurationNs/2) / 1e9
	served := window / 20e-6
	within(t, "CC events dropped", float64(r.EventsDropped), arrivals-served, 0.01)
	within(t, "decisions", float64(r.Decisions), served, 0.01)
}

func TestSwiftAndDCQCNConvergeOn16To1(t *testing.T) {
	ecn := DefaultECN
	for _, c := range []struct {
		ctrl Controller
		cfg  Config
	}{{DefaultSwift, Config{}}, {DefaultDCQCN, Config{ECN: &ecn}}} {
		r := run(t, manyToOne(t, 16), c.ctrl, c.cfg)
		if r.Utilization < 90 || r.Jain < 0.9 {
			t.Errorf("%s 16→1: SU %.2f%%, Jain %.4f; want >= 90%% and >= 0.9", c.ctrl.Name(), r.Utilization, r.Jain)
		}
		t.Logf("%s 16→1: SU %.2f%%, FR %.1f, Jain %.4f, QL %.2f µs (p99 %.2f), DR %.3g Gb/s",
			c.ctrl.Name(), r.Utilization, r.Fairness, r.Jain, r.QueueMeanUs, r.QueueP99Us, r.DropGbps)
	}
}

// DCQCN on a lossless (PFC) network, as RoCE deploys it, avoids drops at 1024→1; PFC alone
// keeps an overload from dropping.
func TestDCQCNWithPFCAvoidsDropsOn1024To1(t *testing.T) {
	ecn := DefaultECN
	r := run(t, manyToOne(t, 1024), DefaultDCQCN, Config{ECN: &ecn, PFC: true})
	if r.DropGbps != 0 || r.PFCPauses == 0 {
		t.Errorf("dcqcn 1024→1 with PFC: DR %.3g Gb/s, %d pauses; want no drops", r.DropGbps, r.PFCPauses)
	}
	t.Logf("dcqcn 1024→1 with PFC: SU %.2f%%, FR %.1f, Jain %.4f, QL %.2f µs, DR %.3g Gb/s, %d pauses",
		r.Utilization, r.Fairness, r.Jain, r.QueueMeanUs, r.DropGbps, r.PFCPauses)
	o := run(t, manyToOne(t, 4), FixedRate{nicsdk.LineRate / 2}, Config{PFC: true})
	if o.DropGbps != 0 || o.DroppedAllRunMB != 0 || o.Utilization < 99 {
		t.Errorf("fixed-rate overload with PFC: SU %.2f%%, DR %.3g Gb/s, %v MB dropped", o.Utilization, o.DropGbps, o.DroppedAllRunMB)
	}
}

// Swift still avoids sustained drops at 1024→1 on the lossy network.
func TestSwiftAvoidsDropsOn1024To1(t *testing.T) {
	r := run(t, manyToOne(t, 1024), DefaultSwift, Config{})
	if r.DropGbps != 0 {
		t.Errorf("swift 1024→1: DR %.3g Gb/s in the window; want none", r.DropGbps)
	}
	t.Logf("swift 1024→1: SU %.2f%%, FR %.1f, Jain %.4f, QL %.2f µs, DR %.3g Gb/s (%.0f MB dropped in the warm-up)",
		r.Utilization, r.Fairness, r.Jain, r.QueueMeanUs, r.DropGbps, r.DroppedAllRunMB)
}

func TestSameSeedSameResult(t *testing.T) {
	ecn := DefaultECN
	cfg := Config{ECN: &ecn, Seed: 7, DurationNs: 4_000_000}
	a := run(t, manyToOne(t, 16), DefaultDCQCN, cfg)
	b := run(t, manyToOne(t, 16), DefaultDCQCN, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different results:\n%+v\n%+v", a, b)
	}
	cfg.Seed = 8
	if c := run(t, manyToOne(t, 16), DefaultDCQCN, cfg); reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 gave the same result: the ECN marks do not use the seed")
	}
}

// With ClockPPM each host's NIC paces by a clock of its own: 16 flows of 16 hosts at one rate,
// started together, no longer send in lockstep (on one ideal clock their bursts start at the
// same picosecond for the whole run), and each host's pacing is off by at most ClockPPM.
func TestHostClocks(t *testing.T) {
	const flows, rate = 16, nicsdk.LineRate / 1000
	lastStarts := func(ppm float64) map[int64]bool {
		s, err := newSim(manyToOne(t, flows), FixedRate{rate}, Config{ClockPPM: ppm, DurationNs: 20_000_000, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
		starts := map[int64]bool{}
		nominal := s.cfg.serPs(s.cfg.MTU) * nicsdk.LineRate / rate
		for i := range s.flows {
			f := &s.flows[i]
			bursts := f.sentMax / int64(s.cfg.MTU)
			off := float64(f.lastStart)/float64((bursts-1)*nominal) - 1
			if bursts < 50 || math.Abs(off) > ppm*1e-6+1e-9 {
				t.Errorf("ClockPPM %v: flow %d sent %d bursts, the last at %d ps, %+.1f ppm off its nominal pace", ppm, i, bursts, f.lastStart, off*1e6)
			}
			starts[f.lastStart] = true
		}
		return starts
	}
	if starts := lastStarts(0); len(starts) != 1 {
		t.Errorf("one ideal clock: the flows' last bursts started at %d different times, want one", len(starts))
	}
	if starts := lastStarts(StandardClockPPM); len(starts) != flows {
		t.Errorf("clocks of their own: the %d flows' last bursts started at only %d different times", flows, len(starts))
	}
}

// rttReader is a fixed rate that keeps the RTTs its NIC hands it.
type rttReader struct {
	FixedRate
	rtts []uint32
}

func (c *rttReader) Decide(ev nicsdk.Event, _ *nicsdk.FlowCtx) (uint32, int64, error) {
	if ev.Type == nicsdk.EvRTT {
		c.rtts = append(c.rtts, ev.RTTNs)
	}
	return c.Rate, 0, nil
}

// A NIC reads an RTT by its own clock: a fast clock (more ticks a real second) reads it long.
// One flow alone at 1/1000 of line rate sees the same RTT every time.
func TestHostClockReadsRTT(t *testing.T) {
	c := &rttReader{FixedRate: FixedRate{nicsdk.LineRate / 1000}}
	s, err := newSim(manyToOne(t, 1), c, Config{ClockPPM: MaxClockPPM, DurationNs: 5_000_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	clock := s.hosts[s.flows[0].Src].clock
	real := s.stats.rttSum / float64(s.stats.rtts) / 1000 // ns
	if math.Abs(clock-1) < 0.002 || len(c.rtts) < 10 || s.stats.rtts == 0 {
		t.Fatalf("clock %v, %d RTTs read, %d in the window: the test needs a clock well off 1 and RTTs", clock, len(c.rtts), s.stats.rtts)
	}
	want := real / clock
	for _, r := range c.rtts[len(c.rtts)/2:] {
		if math.Abs(float64(r)-want) > 1 {
			t.Fatalf("the NIC read %d ns for a real %.1f ns on a clock of %v real ps a tick: want %.1f", r, real, clock, want)
		}
	}
}

// The RL-CC controller is nicsdk's runtime: a policy that always asks for the largest
// multiplier takes a lone flow from its initial rate to line rate, and the context holds
// what the runtime keeps.
func TestRLCCController(t *testing.T) {
	p := nicsdk.DefaultParams()
	p.InitRate = nicsdk.LineRate / 100
	calls := 0
	c := &RLCC{Label: "up", Params: p, Policy: func(x []int32, _ []uint32) int32 { calls++; return nicsdk.YMax },
		Latency: func() int64 { return 1_000_000 }}
	r := run(t, manyToOne(t, 1), c, Config{})
	if r.Utilization < 95 || calls == 0 || int64(calls) < r.Decisions {
		t.Errorf("always-increase policy: SU %.2f%%, %d policy calls for %d decisions in the window", r.Utilization, calls, r.Decisions)
	}
	var ctx nicsdk.FlowCtx
	if rate := c.Init(&ctx); rate != p.InitRate || ctx[nicsdk.CtxFlags]&nicsdk.FlagInit == 0 {
		t.Errorf("Init: rate %d, flags %#x", rate, ctx[nicsdk.CtxFlags])
	}
}

func TestControllerErrorStopsTheRun(t *testing.T) {
	c := &failing{after: 10}
	_, err := Run(manyToOne(t, 2), c, Config{})
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "flow ") || !strings.Contains(err.Error(), "trap at pc 0x1234") {
		t.Errorf("err = %v", err)
	}
}

type failing struct {
	FixedRate
	after int
}

func (f *failing) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	if f.after--; f.after < 0 {
		return 0, 0, errors.New("trap at pc 0x1234")
	}
	return nicsdk.LineRate, 0, nil
}

func TestLongShortRecovers(t *testing.T) {
	s, err := LongShort(2, 2<<20, 6_000_000)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, s, DefaultSwift, Config{DurationNs: 20_000_000, WarmupNs: 1_000_000})
	if r.RecoveryUs == nil || *r.RecoveryUs < 0 {
		t.Fatalf("long-short: recovery %v; want a time", r.RecoveryUs)
	}
	t.Logf("swift long-short 2 × 2 MiB: recovery %.1f µs, DR %.3g Gb/s", *r.RecoveryUs, r.DropGbps)
}

func TestAllToAllRuns(t *testing.T) {
	s, err := AllToAll(4)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Flows) != 32 || s.Flows[5].Dst != 1 || s.Flows[9].Src != 1 {
		t.Fatalf("all-to-all 4: %d flows, flow 5 → %d, flow 9 from %d", len(s.Flows), s.Flows[5].Dst, s.Flows[9].Src)
	}
	r := run(t, s, DefaultSwift, Config{DurationNs: 4_000_000})
	if r.ReceiverPorts != 4 || r.Utilization < 80 {
		t.Errorf("swift all-to-all 4: %d receiver ports, SU %.2f%%", r.ReceiverPorts, r.Utilization)
	}
}

func TestManyToOneHostMapping(t *testing.T) {
	for n, hosts := range map[int]int{2: 2, 64: 64, 128: 64, 256: 32, 512: 64, 1024: 32, 2048: 64, 4096: 64, 8192: 64} {
		s := manyToOne(t, n)
		if s.Hosts != hosts+1 || len(s.Flows) != n || s.Flows[n-1].Dst != hosts {
			t.Errorf("%d flows: %d hosts (want %d senders + 1), %d flows", n, s.Hosts, hosts, len(s.Flows))
		}
	}
	if _, err := ManyToOne(100); err == nil {
		t.Error("100 flows: no error")
	}
}

func TestBadInput(t *testing.T) {
	s := manyToOne(t, 2)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{LinkGbps: -1}, "link rate"}, {Config{BufferBytes: -5}, "buffer"}, {Config{DurationNs: -1}, "duration"},
		{Config{BufferBytes: 100}, "smaller than one"}, {Config{WarmupNs: 30_000_000}, "warm-up"},
		{Config{ECN: &ECN{KminBytes: 10, KmaxBytes: 5}}, "ECN"}, {Config{LinkGbps: math.NaN()}, "link rate"},
		{Config{ClockPPM: -1}, "clock"}, {Config{ClockPPM: math.NaN()}, "clock"}, {Config{ClockPPM: MaxClockPPM + 1}, "clock"},
		{Config{Actions: []Action{{AtNs: 20_000_000, Do: func() error { return nil }}}}, "action at 20000000 ns"},
		{Config{Actions: []Action{{AtNs: 0, Do: func() error { return nil }}}}, "action at 0 ns"},
		{Config{Actions: []Action{{AtNs: 5}}}, "action at 5 ns"},
		{Config{HostDelayNs: -1}, "host delay"}, {Config{HostDelayNs: MaxPropNs + 1}, "host delay"}, {Config{Probe: 9}, "probe policy"},
		{Config{TurnaroundNs: -1}, "RTT turnaround"}, {Config{TurnaroundNs: MaxPropNs + 1}, "RTT turnaround"},
		{Config{TXLeadNs: -1}, "TX lead"}, {Config{TXLeadNs: MaxPropNs + 1}, "TX lead"},
	} {
		if _, err := Run(s, FixedRate{nicsdk.LineRate}, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want one naming %q", c.cfg, err, c.want)
		}
	}
	if _, err := Run(Scenario{Name: "empty", Hosts: 2, Long: -1}, FixedRate{1}, Config{}); err == nil || !strings.Contains(err.Error(), "no flows") {
		t.Errorf("no flows: %v", err)
	}
	if _, err := ManyToOne(0); err == nil {
		t.Error("zero flows: no error")
	}
}

// BenchmarkManyToOne8192 runs many-to-one 8192→1 under the RL-CC runtime with a cheap integer
// policy (a stand-in for a compiled policy's golden model) that controls the queue, and
// reports the simulator's speed; BenchmarkManyToOne8192Full is its peer whose policy lets the
// buffer fill.
//
//	go test ./netsim -run '^$' -bench ManyToOne -benchtime 1x
func BenchmarkManyToOne8192(b *testing.B) {
	p := nicsdk.DefaultParams()
	// 8192 flows need a minimum rate below 1/8192 of line rate (the default 0.001 would
	// overload the receiver 8×), and start at their fair share.
	p.InitRate, p.MinRate = nicsdk.LineRate/8192, 32
	benchManyToOne8192(b, &RLCC{Label: "proportional", Params: p, Policy: func(x []int32, _ []uint32) int32 {
		return min(max(-4*x[1], nicsdk.YMin), nicsdk.YMax) // slow down as o grows
	}})
}

// BenchmarkManyToOne8192Full runs many-to-one 8192→1 with a policy that never changes a
// flow's rate, every flow at the default minimum rate (0.001 of line rate, where a shipped
// policy at 8192 flows settles): 8× the receiver's link, so the buffer stays full and most
// data is dropped at the switch.
func BenchmarkManyToOne8192Full(b *testing.B) {
	p := nicsdk.DefaultParams()
	p.InitRate = p.MinRate
	benchManyToOne8192(b, &RLCC{Label: "hold", Params: p, Policy: func([]int32, []uint32) int32 { return 0 }})
}

func benchManyToOne8192(b *testing.B, c Controller) {
	s := manyToOne(b, 8192)
	cfg := Config{DurationNs: 10_000_000}
	var r *Result
	cpu0 := cpuSeconds(b)
	for b.Loop() {
		r = run(b, s, c, cfg)
	}
	wall := b.Elapsed().Seconds() / float64(b.N)
	simS := float64(cfg.DurationNs) / 1e9
	b.ReportMetric(float64(r.SimEvents)/wall, "events/s")
	b.ReportMetric(wall/simS, "wall-s/sim-s")
	// On a shared machine the process's CPU time is steadier than the wall's.
	b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N)/simS, "cpu-s/sim-s")
	b.ReportMetric(r.Utilization, "SU%")
	b.ReportMetric(r.DropGbps, "DR-Gb/s")
	b.ReportMetric(float64(r.Decisions), "decisions")
	b.ReportMetric(0, "ns/op")
}

// cpuSeconds is the process's CPU time so far, user and system.
func cpuSeconds(b *testing.B) float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// An action changes a controller at its time: the run's trace equals the unchanged run's up to
// that time and differs after it; an action's error stops the run.
func TestAction(t *testing.T) {
	p := nicsdk.DefaultParams()
	p.InitRate = nicsdk.LineRate / 4
	runWith := func(actions ...Action) *Trace {
		y := int32(nicsdk.YMax)
		c := &RLCC{Label: "constant", Params: p, Policy: func(x []int32, _ []uint32) int32 { return y }}
		for i := range actions {
			actions[i].Do = func() error { y = nicsdk.YMin; return nil }
		}
		cfg := Config{DurationNs: 1_000_000, TraceNs: 5_000, LatencyNs: 500, BufferBytes: 256 << 10, Actions: actions}
		return run(t, manyToOne(t, 8), c, cfg).Trace
	}
	const atNs = 400_000
	before := runWith()
	after := runWith(Action{AtNs: atNs})
	differ := -1
	for k, us := range after.TimesUs {
		same := before.QueueKB[k] == after.QueueKB[k]
		for f := range after.Flows {
			same = same && before.FlowGbps[f][k] == after.FlowGbps[f][k]
		}
		if us <= atNs/1000 && !same {
			t.Fatalf("the runs differ at %v µs, before the action at %d µs", us, atNs/1000)
		}
		if !same && differ < 0 {
			differ = k
		}
	}
	if differ < 0 {
		t.Fatal("the action changed nothing")
	}
	t.Logf("the runs differ from %v µs on (the action at %d µs)", after.TimesUs[differ], atNs/1000)
	fail := Config{DurationNs: 1_000_000, Actions: []Action{{AtNs: 300_000, Do: func() error { return errors.New("refused") }}}}
	if _, err := Run(manyToOne(t, 2), FixedRate{nicsdk.LineRate}, fail); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "action at 300.000 µs: refused") {
		t.Errorf("a failing action: %v", err)
	}
}

// A trace samples every TraceNs: fixed-rate flows show their rate, and an overloaded
// receiver's queue fills to the buffer.
func TestTrace(t *testing.T) {
	r := run(t, manyToOne(t, 4), FixedRate{nicsdk.LineRate / 2}, Config{DurationNs: 2_000_000, TraceNs: 10_000})
	tr := r.Trace
	if tr == nil || len(tr.TimesUs) != 201 || len(tr.Flows) != 4 || len(tr.FlowGbps[3]) != 201 {
		t.Fatalf("trace: %+v", tr)
	}
	if tr.FlowGbps[0][100] != 50 || tr.QueueKB[0] != 0 {
		t.Errorf("flow 0 at %v Gb/s, queue %v KB at the start", tr.FlowGbps[0][100], tr.QueueKB[0])
	}
	if q := tr.QueueKB[200]; q < 0.99*float64(Defaults.BufferBytes)/1000 {
		t.Errorf("queue %v KB at the end of an overload; want the %d-byte buffer full", q, Defaults.BufferBytes)
	}
	if _, err := Run(manyToOne(t, 1), FixedRate{1}, Config{TraceNs: 1}); err == nil {
		t.Error("a 1 ns trace over 20 ms: no error")
	}
}

// One flow alone: its probe waits at the switch only for its own burst's last packet, stored
// and forwarded (one MTU's serialization), so the inflation is 1 + that over the base RTT.
func TestRTTInflationOfAnEmptyPath(t *testing.T) {
	r := run(t, manyToOne(t, 1), FixedRate{nicsdk.LineRate / 4}, Config{})
	d := Defaults
	want := 1 + float64(d.serPs(d.MTU)-d.serPs(d.ProbeBytes))/1e6/r.BaseRTTUs // it arrives one probe time after that packet
	if math.Abs(r.RTTInflation-want) > 1e-9 || math.Abs(r.BaseRTTUs-4.02048) > 1e-9 {
		t.Errorf("one flow at 25 Gb/s: inflation %v over a base RTT of %v µs; want %v over 4.02048 µs", r.RTTInflation, r.BaseRTTUs, want)
	}
	// Each NIC's pipeline delay adds four to the empty path: its own on the probe and the
	// reply, the receiver's on both.
	h := run(t, manyToOne(t, 1), FixedRate{nicsdk.LineRate / 4}, Config{HostDelayNs: 2000})
	if got := h.RTTInflation * h.BaseRTTUs; math.Abs(h.BaseRTTUs-12.02048) > 1e-9 || math.Abs(got-r.RTTInflation*r.BaseRTTUs-8) > 1e-6 {
		t.Errorf("a 2 µs host delay: mean RTT %v µs over a base RTT of %v µs; want 8 µs more than without (%v), over 12.02048 µs", got, h.BaseRTTUs, r.RTTInflation*r.BaseRTTUs)
	}
}
