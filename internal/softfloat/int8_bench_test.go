package softfloat_test

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// BenchmarkInt8VsSoftFloat runs, in one run on the dpa profile, the soft-float baseline and
// the integer policy nicc compiles from the same network on the same 1000 RL-CC states (the
// LSTMs as one flow each, state carried from decision to decision), and reports the median
// cycles of both, the integer policy's static WCET, and the ratios soft-float median / int8
// median and soft-float median / int8 WCET. The integer MLP is the configuration compile chooses
// for the teacher (int16 weights and activations, per-channel scales, two channels' lanes to a
// multiply, open relus); the integer LSTM is quantize.LSTM's in codegen's branch form (the one
// within dpa's memory budget).
//
//	go test ./internal/softfloat -run '^$' -bench Int8VsSoftFloat -benchtime 1x -v
func BenchmarkInt8VsSoftFloat(b *testing.B) {
	prof, err := fwsim.LookupProfile("dpa")
	if err != nil {
		b.Fatal(err)
	}
	xs := floatStates(b, 1000, 42)
	rows, err := testutil.RLCCRows(20000, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, float string }{{"mlp", "float_mlp"}, {"lstm", "float_lstm"}} {
		b.Run(c.name, func(b *testing.B) {
			fm := floatModel(b, c.float)
			var files *codegen.Files
			var inputs []quantize.Input
			words := 0
			if c.name == "lstm" {
				ir, err := quantize.LSTM(fm, rlccRanges(), rows, quantize.LSTMOptions{})
				if err != nil {
					b.Fatal(err)
				}
				files, err = codegen.LSTM(ir, codegen.Options{})
				if err != nil {
					b.Fatal(err)
				}
				inputs, words = ir.Inputs, ir.StateWords()
			} else {
				ir, err := quantize.MLP(fm, rlccRanges(), rows, quantize.MLPOptions{WeightBits: 16, ActBits: 16, ChannelScales: true, Packed: true, OpenReLU: true})
				if err != nil {
					b.Fatal(err)
				}
				files, err = codegen.MLP(ir, codegen.Options{})
				if err != nil {
					b.Fatal(err)
				}
				inputs = ir.Inputs
			}
			im, _, m := testutil.DPAMachine(b, policyELF(b, files))
			xa, err := m.Alloc(uint64(4*len(inputs)), 16)
			if err != nil {
				b.Fatal(err)
			}
			sa, err := m.Alloc(uint64(4*max(words, 1)), 16)
			if err != nil {
				b.Fatal(err)
			}
			bound, err := wcet.Bound(im, codegen.DefaultFunc, prof, wcet.Options{})
			if err != nil {
				b.Fatal(err)
			}
			fb := buildFloat(b, fm)
			sim := fb.sim(b, prof)
			soft := make([]uint64, len(xs))
			fixed := make([]uint64, len(xs))
			xb := make([]byte, 4*len(inputs))
			for b.Loop() {
				if err := m.WriteBytes(sa, make([]byte, 4*max(words, 1))); err != nil {
					b.Fatal(err)
				}
				if fb.stat > 0 {
					if err := sim.m.WriteBytes(sim.st, make([]byte, 4*fb.stat)); err != nil {
						b.Fatal(err)
					}
				}
				for k, x := range xs {
					sim.call(b, x)
					soft[k] = sim.cyc
					for i, in := range inputs {
						binary.LittleEndian.PutUint32(xb[4*i:], uint32(in.Quantize(float64(x[i]))))
					}
					if err := m.WriteBytes(xa, xb); err != nil {
						b.Fatal(err)
					}
					res, err := m.Call(codegen.DefaultFunc, xa, sa)
					if err != nil {
						b.Fatal(err)
					}
					fixed[k] = res.Cycles
				}
			}
			slices.Sort(soft)
			slices.Sort(fixed)
			if fixed[len(fixed)-1] > bound.Cycles {
				b.Fatalf("measured %d cycles > WCET %d", fixed[len(fixed)-1], bound.Cycles)
			}
			us := func(c uint64) float64 { return prof.Seconds(c, 1) * 1e6 }
			sm, im8 := soft[len(soft)/2], fixed[len(fixed)/2]
			b.ReportMetric(float64(sm), "softfloat-cycles-median")
			b.ReportMetric(us(sm), "softfloat-µs-median")
			b.ReportMetric(float64(im8), "int8-cycles-median")
			b.ReportMetric(float64(bound.Cycles), "int8-wcet-cycles")
			b.ReportMetric(us(bound.Cycles), "int8-wcet-µs")
			b.ReportMetric(float64(sm)/float64(im8), "ratio-median")
			b.ReportMetric(float64(sm)/float64(bound.Cycles), "ratio-softmedian/int8wcet")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// rlccRanges are the RL-CC inputs' Q16 formats under the default parameters.
func rlccRanges() []quantize.Input {
	return quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
}

// policyELF builds an integer policy's C for the engine.
func policyELF(t testing.TB, f *codegen.Files) string {
	t.Helper()
	dir := t.TempDir()
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	elf := filepath.Join(dir, "policy.elf")
	if err := nicsdk.Build(elf, linkScript, append(append([]string{}, strictFlags...), "-O2", "-I", dir), filepath.Join(dir, f.SourceName)); err != nil {
		t.Fatal(err)
	}
	return elf
}
