package softfloat_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
)

// BenchmarkSoftFloatBaseline times the float MLP and LSTM, compiled for the FPU-less engine
// with gcc's soft-float (libgcc), in fwsim on the dpa profile: cycles and instructions per
// decision over 1000 sampled RL-CC states (the LSTM as one flow, its state carried from
// decision to decision), and µs at the profile's clock (1.8 GHz, an assumption). It also
// reports the static WCET when fwsim can bound it; when it cannot, it logs why and reports
// the measured figures only. Here it cannot, for three reasons found by supplying bounds one
// by one: the float C's own loops (the analysis does not count them), libgcc's __clzdi2 (a
// byte-scan loop, at most 7 head runs by its disassembly), and __divsf3 (tanh and sigmoid
// divide), which dispatches on the operand classes through a jump table the analysis does
// not resolve. The last has no loop bound to give, so no WCET is reported.
//
//	go test ./internal/softfloat -run '^$' -bench SoftFloatBaseline -benchtime 1x -v
func BenchmarkSoftFloatBaseline(b *testing.B) {
	prof, err := fwsim.LookupProfile("dpa")
	if err != nil {
		b.Fatal(err)
	}
	xs := floatStates(b, 1000, 42)
	for _, name := range []string{"float_mlp", "float_lstm"} {
		b.Run(name, func(b *testing.B) {
			fb := buildFloat(b, floatModel(b, name))
			sim := fb.sim(b, prof)
			zero := make([]byte, 4*fb.stat)
			cyc := make([]uint64, len(xs))
			insns := make([]uint64, len(xs))
			for b.Loop() {
				if fb.stat > 0 {
					if err := sim.m.WriteBytes(sim.st, zero); err != nil {
						b.Fatal(err)
					}
				}
				for k, x := range xs {
					sim.call(b, x)
					cyc[k], insns[k] = sim.cyc, sim.insns
				}
			}
			slices.Sort(cyc)
			slices.Sort(insns)
			us := func(c uint64) float64 { return prof.Seconds(c, 1) * 1e6 }
			med := func(v []uint64) uint64 { return v[len(v)/2] }
			b.ReportMetric(float64(cyc[len(cyc)-1]), "cycles-max")
			b.ReportMetric(float64(med(cyc)), "cycles-median")
			b.ReportMetric(us(cyc[len(cyc)-1]), "µs-max@1.8GHz")
			b.ReportMetric(us(med(cyc)), "µs-median@1.8GHz")
			b.ReportMetric(float64(insns[len(insns)-1]), "insns-max")
			b.ReportMetric(float64(med(insns)), "insns-median")
			b.ReportMetric(0, "ns/op")
			w, err := wcet.Bound(sim.m.Image(), sim.fn, prof, wcet.Options{})
			var we *wcet.Error
			switch {
			case err == nil:
				if w.Cycles < cyc[len(cyc)-1] {
					b.Fatalf("%s: measured %d cycles > WCET %d", name, cyc[len(cyc)-1], w.Cycles)
				}
				b.ReportMetric(float64(w.Cycles), "wcet-cycles")
				b.ReportMetric(us(w.Cycles), "wcet-µs@1.8GHz")
				b.ReportMetric(float64(w.Insns), "wcet-insns")
			case errors.As(err, &we):
				b.Logf("%s: WCET not bounded: %v; measured figures only", name, err)
			default:
				b.Fatalf("%s: WCET: %v", name, err)
			}
		})
	}
}
