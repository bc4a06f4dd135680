package fwsim_test

// BenchmarkDecision and BenchmarkPolicy: fwsim's speed on a decision, against qemu-riscv64
// running the same function in a loop.
//
// BenchmarkDecision's function is decide (testdata/referee/decision.c): a 10-tree, depth-4
// if/else ensemble over eight int32 features, as nicc's codegen prints trees, then a
// fixed-point rate update on the flow context. At -O2 a call is a couple of hundred
// instructions.
//
// BenchmarkPolicy's decision is nicc_on_event, the RL-CC event handler (nicsdk's rlcc.h)
// around an emitted policy, one sub-benchmark per code form the compiler emits for the
// shipped models today: testdata/policy/<case>/ holds a pinned compile's nicc_policy.c,
// nicc_policy.h and handler.c (rlcc_xgb: 10 trees of depth 4 in the rank form; teacher_int:
// the integer MLP; lstm_int: the integer LSTM in the table form; TestPolicyFixturesAreCurrent),
// and testdata/policy/policy_bench.c the driver that cycles it through 256 events of 16 flows.
//
// Reported per run:
//   - insn/s: instructions fwsim emulates per second while counting cycles, over b.N calls of
//     the decision through the call harness (Machine.Call), harness overhead included;
//   - insn/call, cycles/call: what one decision costs under the dpa profile;
//   - loop-insn/s: fwsim running bench_loop(N/10), the loop qemu runs, as one call, the best
//     of five runs taken in turns with qemu's;
//   - qemu-insn/s: qemu-riscv64 running bench_loop(N) from bench_main, timed end to end with
//     the time of a run with N = 0 (process start, translation of the start-up) subtracted,
//     each the best of five; the instruction count is fwsim's count of the same loop, since
//     it is the same code;
//   - fwsim/qemu: insn/s over qemu-insn/s;
//   - loop-fwsim/qemu: loop-insn/s over qemu-insn/s, both best of five runs in turns: the
//     figure that holds up best on a machine shared with other work;
//   - cpu-insn/s, cpu-fwsim/qemu: the same from CPU time (this process's, qemu's) rather than
//     wall-clock time, which holds up better on a machine shared with other work.

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// loopBench is the loop side of a benchmark, measured once per process: an ELF whose
// bench_main(argc, argv) runs bench_loop(N) for qemu, and fwsim running bench_loop(n/fwsimDiv)
// as one call, each the best of loopRepeats runs taken in turns, so that both sides see the
// same load on a shared machine.
type loopBench struct {
	srcs func(tb testing.TB, dir string) (srcs, includes []string) // what to build, in a scratch dir
	n    uint64                                                    // calls in the loop qemu times

	once   sync.Once
	err    error
	elf    []byte
	insns  uint64   // instructions of bench_loop(n), counted by fwsim
	qemu   runTimes // qemu's best times for bench_loop(n), start-up subtracted
	finsns uint64   // instructions of bench_loop(n/fwsimDiv)
	fwsim  runTimes // fwsim's best times for it
}

// loopRepeats is how many times each side runs its loop; fwsimDiv is how many times fewer
// calls fwsim's loop makes than qemu's (qemu's must be long against its start-up; fwsim has
// none).
const (
	loopRepeats = 5
	fwsimDiv    = 10
)

// decisionBench is BenchmarkDecision's loop: decide over 64 feature vectors of one flow.
// 4M calls keep qemu busy for about a second, so that timer noise and process start are small
// against it.
var decisionBench = loopBench{
	n: 4_000_000,
	srcs: func(tb testing.TB, dir string) ([]string, []string) {
		return []string{"bench_start.S", "bench_main.c", "rt.c", "decision.c"}, nil
	},
}

// policyFixtures are BenchmarkPolicy's emitted policies, one per code form the compiler
// emits for the shipped models today, each in testdata/policy/<case>/ as the compile pinned in
// testdata/outputs/<case>.json wrote it (TestPolicyFixturesAreCurrent): nicc_policy.c,
// nicc_policy.h and handler.c.
var policyFixtures = []*policyFixture{
	{name: "rlcc_xgb", bench: policyLoop("rlcc_xgb", 3_000_000)},       // 10 trees of depth 4, rank form: ~210 insns a call
	{name: "teacher_int", bench: policyLoop("teacher_int", 2_000_000)}, // the integer MLP: ~480
	{name: "lstm_int", bench: policyLoop("lstm_int", 1_000_000)},       // the integer LSTM, table form: ~1360
}

type policyFixture struct {
	name  string // the pinned compile's case, testdata/outputs/<name>.json
	bench *loopBench
}

// policyFiles are the emitted files a fixture copies.
var policyFiles = []string{"nicc_policy.c", "nicc_policy.h", "handler.c"}

// policyLoop is the loop of BenchmarkPolicy's case: the compile's handler around its policy,
// over 256 events of 16 flows (testdata/policy/policy_bench.c), n calls for qemu (about a
// second's work).
func policyLoop(name string, n uint64) *loopBench {
	return &loopBench{
		n: n,
		srcs: func(tb testing.TB, dir string) ([]string, []string) {
			if err := nicsdk.WriteSources(dir); err != nil {
				tb.Fatal(err)
			}
			pol, err := filepath.Abs(filepath.Join("testdata/policy", name))
			if err != nil {
				tb.Fatal(err)
			}
			bench, err := filepath.Abs("testdata/policy/policy_bench.c")
			if err != nil {
				tb.Fatal(err)
			}
			return []string{"bench_start.S", "rt.c", bench, filepath.Join(pol, "handler.c")}, []string{dir, pol}
		},
	}
}

// measure builds q's ELF, times bench_loop(q.n) in fwsim and in qemu-riscv64, once.
func (q *loopBench) measure(b *testing.B) {
	requireCC(b)
	requireTool(b, qemuRV)
	q.once.Do(func() { q.err = q.run(b) })
	if q.err != nil {
		b.Fatal(q.err)
	}
}

func (q *loopBench) run(b *testing.B) error {
	dir, err := os.MkdirTemp("", "nicc-fwsim-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	elfPath := filepath.Join(dir, "bench.elf")
	srcs, incs := q.srcs(b, dir)
	q.elf, err = compileELF(build{Out: elfPath, Opt: "-O2", Srcs: srcs, Includes: incs})
	if err != nil {
		return err
	}
	m, err := benchMachine(q.elf)
	if err != nil {
		return err
	}
	m.StepLimit = 1 << 40
	fwsimLoop := func(n uint64) (uint64, runTimes, error) {
		if _, err := m.Call("bench_init"); err != nil {
			return 0, runTimes{}, err
		}
		start, cpu := time.Now(), processCPU()
		res, err := m.Call("bench_loop", n)
		return res.Insns, runTimes{wall: time.Since(start), cpu: processCPU() - cpu}, err
	}
	if q.insns, _, err = fwsimLoop(q.n); err != nil {
		return err
	}
	qemuLoop := func(n uint64) (runTimes, error) {
		_, t, err := qemuExec(5*time.Minute, elfPath, strconv.FormatUint(n, 10))
		return t, err
	}
	var full, empty runTimes
	for k := 0; k < loopRepeats; k++ {
		var f runTimes
		if q.finsns, f, err = fwsimLoop(q.n / fwsimDiv); err != nil {
			return err
		}
		qf, err := qemuLoop(q.n)
		if err != nil {
			return err
		}
		qe, err := qemuLoop(0)
		if err != nil {
			return err
		}
		q.fwsim, full, empty = f.best(q.fwsim, k), qf.best(full, k), qe.best(empty, k)
	}
	q.qemu = runTimes{wall: full.wall - empty.wall, cpu: full.cpu - empty.cpu}
	if q.qemu.wall <= 0 || q.qemu.cpu <= 0 {
		return fmt.Errorf("qemu's loop of %d calls took %+v, no longer than its empty run (%+v)", q.n, full, empty)
	}
	return nil
}

// best is the shorter of t and the best of the k runs before it, wall and CPU time apart.
func (t runTimes) best(before runTimes, k int) runTimes {
	if k == 0 {
		return t
	}
	return runTimes{wall: min(t.wall, before.wall), cpu: min(t.cpu, before.cpu)}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds the per-call and qemu metrics of a benchmark that made b.N calls taking insns
// instructions and cycles in all, and cpu of CPU time.
func (q *loopBench) report(b *testing.B, insns, cycles uint64, cpu time.Duration) {
	secs := b.Elapsed().Seconds()
	if secs <= 0 || insns == 0 {
		return
	}
	fw := float64(insns) / secs
	qemu := float64(q.insns) / q.qemu.wall.Seconds()
	b.ReportMetric(fw, "insn/s")
	b.ReportMetric(float64(insns)/float64(b.N), "insn/call")
	b.ReportMetric(float64(cycles)/float64(b.N), "cycles/call")
	loop := float64(q.finsns) / q.fwsim.wall.Seconds()
	b.ReportMetric(loop, "loop-insn/s")
	b.ReportMetric(qemu, "qemu-insn/s")
	b.ReportMetric(fw/qemu, "fwsim/qemu")
	b.ReportMetric(loop/qemu, "loop-fwsim/qemu")
	if cpu > 0 {
		fwCPU := float64(insns) / cpu.Seconds()
		b.ReportMetric(fwCPU, "cpu-insn/s")
		b.ReportMetric(fwCPU/(float64(q.insns)/q.qemu.cpu.Seconds()), "cpu-fwsim/qemu")
	}
}

func benchMachine(elf []byte) (*fwsim.Machine, error) {
	im, err := fwsim.LoadELF(elf)
	if err != nil {
		return nil, err
	}
	p, err := fwsim.LookupProfile(fwsim.DefaultProfile)
	if err != nil {
		return nil, err
	}
	return fwsim.NewMachine(im, p)
}

// benchSetup is a machine for q's ELF after bench_init, and the values of fn(v) for v in
// [0, n): the addresses the calls use.
func benchSetup(b *testing.B, q *loopBench, fn string, n int) (*fwsim.Machine, []uint64) {
	m, err := benchMachine(q.elf)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Call("bench_init"); err != nil {
		b.Fatal(err)
	}
	vals := make([]uint64, n)
	for v := range vals {
		res, err := m.Call(fn, uint64(v))
		if err != nil {
			b.Fatal(err)
		}
		vals[v] = res.A0
	}
	return m, vals
}

// BenchmarkDecision calls decide b.N times in fwsim, cycling through 64 feature vectors of one
// flow, and compares fwsim's emulated instructions per second with qemu-riscv64's on the same
// code (see the file comment for each metric).
func BenchmarkDecision(b *testing.B) {
	q := &decisionBench
	q.measure(b)
	m, feats := benchSetup(b, q, "bench_features", 64)
	res, err := m.Call("bench_flow")
	if err != nil {
		b.Fatal(err)
	}
	flow := res.A0

	var insns, cycles uint64
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		res, err := m.Call("decide", feats[i%len(feats)], flow)
		if err != nil {
			b.Fatal(err)
		}
		insns += res.Insns
		cycles += res.Cycles
	}
	b.StopTimer()
	q.report(b, insns, cycles, processCPU()-cpu)
}

// BenchmarkPolicy calls nicc_on_event, the RL-CC handler around each fixture's emitted policy,
// b.N times in fwsim on the events and flows bench_loop cycles through (event i goes to flow
// i mod 16), and compares with qemu-riscv64 as BenchmarkDecision does.
func BenchmarkPolicy(b *testing.B) {
	for _, fx := range policyFixtures {
		b.Run(fx.name, func(b *testing.B) { benchPolicy(b, fx.bench) })
	}
}

func benchPolicy(b *testing.B, q *loopBench) {
	q.measure(b)
	m, events := benchSetup(b, q, "bench_event", 256)
	flows := make([]uint64, 16)
	for f := range flows {
		res, err := m.Call("bench_flow", uint64(f))
		if err != nil {
			b.Fatal(err)
		}
		flows[f] = res.A0
	}

	var insns, cycles uint64
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		res, err := m.Call("nicc_on_event", events[i%len(events)], flows[i%len(flows)])
		if err != nil {
			b.Fatal(err)
		}
		insns += res.Insns
		cycles += res.Cycles
	}
	b.StopTimer()
	q.report(b, insns, cycles, processCPU()-cpu)
}

// BenchmarkPolicy's policies are what nicc compile emits today: each fixture's files hash as
// its compile's pinned outputs (testdata/outputs/<case>.json, which compiler's
// TestShippedOutputsUnchanged holds the compiler to). When the compiler's output moves, copy
// the case's compile's nicc_policy.c, nicc_policy.h and handler.c here (compiler's
// outputCases say how each is compiled: `nicc compile testdata/models/rlcc_xgb.json`,
// `nicc compile testdata/models/rlcc_teacher.json --target int`, `nicc compile
// testdata/models/rlcc_lstm.onnx --target int`, with --num-vectors 20000 --seed 1).
func TestPolicyFixturesAreCurrent(t *testing.T) {
	for _, fx := range policyFixtures {
		raw, err := os.ReadFile(filepath.Join("../testdata/outputs", fx.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var pinned struct {
			SHA256 map[string]string `json:"sha256"`
		}
		if err := json.Unmarshal(raw, &pinned); err != nil {
			t.Fatal(err)
		}
		for _, name := range policyFiles {
			path := filepath.Join("testdata/policy", fx.name, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := pinned.SHA256[name]
			if want == "" {
				t.Fatalf("%s.json pins no %s", fx.name, name)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
				t.Errorf("%s: sha256 %s, the compiler's output %s: the fixture is stale", path, got, want)
			}
		}
	}
}
