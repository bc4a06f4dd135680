package fwsim_test

import (
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
)

// The fast path against the reference (fastpath_test.go) on compiled decisions: the
// benchmarks' ELFs, decide and the RL-CC handler around each emitted policy fixture, over
// every vector and event the benchmarks use, with the state they leave carried from call to
// call, and at every step limit on a few calls.
func TestFastPathBenchELFs(t *testing.T) {
	t.Parallel()
	requireCC(t)
	type benchCase struct {
		name, entry, arg, ctx string
		bench                 *loopBench
		nargs, nctx           int
	}
	cases := []benchCase{{"decision", "decide", "bench_features", "bench_flow", &decisionBench, 64, 1}}
	for _, fx := range policyFixtures {
		cases = append(cases, benchCase{"policy_" + fx.name, "nicc_on_event", "bench_event", "bench_flow", fx.bench, 256, 16})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			srcs, incs := tc.bench.srcs(t, dir)
			elf, err := compileELF(build{Out: filepath.Join(dir, "bench.elf"), Opt: "-O2", Srcs: srcs, Includes: incs})
			if err != nil {
				t.Fatal(err)
			}
			im, err := fwsim.LoadELF(elf)
			if err != nil {
				t.Fatal(err)
			}
			fast, ref := fwsim.MachinePair(t, im)
			if fwsim.FusedOps(fast) == 0 {
				t.Fatal("no superinstructions in the benchmark's code")
			}
			addr := func(name string) uint64 {
				a, _, ok := im.Symbol(name)
				if !ok {
					t.Fatalf("no symbol %s", name)
				}
				return a
			}
			if msg := fwsim.CompareCall(fast, ref, addr("bench_init"), fwsim.DefaultStepLimit); msg != "" {
				t.Fatal(msg)
			}
			value := func(fn string, v int) uint64 {
				res, err := ref.RefCall(addr(fn), uint64(v))
				if err != nil {
					t.Fatal(err)
				}
				return res.A0
			}
			entry := addr(tc.entry)
			for i := 0; i < 3*tc.nargs; i++ {
				a, c := value(tc.arg, i%tc.nargs), value(tc.ctx, i%tc.nctx)
				if i%50 == 7 {
					fwsim.CompareLimits(t, fast, ref, entry, a, c)
				} else if msg := fwsim.CompareCall(fast, ref, entry, fwsim.DefaultStepLimit, a, c); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}
