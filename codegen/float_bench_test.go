package codegen_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
)

// BenchmarkSoftFloatBaseline times the float MLP and LSTM, compiled for the FPU-less engine
// with gcc's soft-float (libgcc), in fwsim on the dpa profile: cycles and instructions per
// decision over 1000 sampled RL-CC states (the LSTM as one flow, its state carried from
// decision to decision), and µs at the profile's clock (1.8 GHz, an assumption). It also
// reports the static WCET when fwsim can bound it; when it cannot (the soft-float routines
// hold loops and jump tables), it logs why and reports the measured figures only. With the
// rv64imac libgcc of gcc 12.2, __divsf3's jump table stops the analysis for both networks.
//
//	go test ./codegen -run '^$' -bench SoftFloatBaseline -benchtime 1x -v
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
			w, err := softFloatWCET(sim.m.Image(), sim.fn, prof)
			var we *fwsim.WCETError
			switch {
			case err == nil:
				if w.Cycles < cyc[len(cyc)-1] {
					b.Fatalf("%s: measured %d cycles > WCET %d", name, cyc[len(cyc)-1], w.Cycles)
				}
				b.ReportMetric(float64(w.Cycles), "wcet-cycles")
				b.ReportMetric(us(w.Cycles), "wcet-µs@1.8GHz")
				b.ReportMetric(float64(w.Insns), "wcet-insns")
			case errors.As(err, &we):
				// The rv64imac libgcc's __divsf3 dispatches on the operand classes through a
				// jump table the analysis does not resolve (tanh and sigmoid divide).
				b.Logf("%s: WCET not bounded: %v; measured figures only", name, err)
			default:
				b.Fatalf("%s: WCET: %v", name, err)
			}
		})
	}
}

// clzLoopBound bounds the one loop in the rv64imac libgcc's __clzdi2 that the WCET analysis
// cannot count: libgcc2.c's generic count_leading_zeros (longlong.h, no clz instruction in
// rv64imac) scans the word a byte at a time, `for (a = 64 - 8; a > 0; a -= 8) if ((x >> a) &
// 0xff) break;`, then looks the byte up in __clz_tab. gcc -O2 rotates it so that the head is
// `a -= 8`, run at most 7 times per call (a = 48, 40, ..., 0, where it exits).
const clzLoopBound = 7

// softFloatWCET is fwsim.WCET of entry with clzLoopBound on the loops of __clzdi2, the only
// loop bound it supplies; any other unbounded loop is returned as the error.
func softFloatWCET(im *fwsim.Image, entry string, p *fwsim.Profile) (*fwsim.WCETReport, error) {
	opt := fwsim.WCETOptions{LoopBounds: map[uint64]int{}}
	for {
		w, err := fwsim.WCET(im, entry, p, opt)
		var we *fwsim.WCETError
		if err == nil || !errors.As(err, &we) || !errors.Is(err, fwsim.ErrUnboundedLoop) ||
			we.Func != "__clzdi2" || opt.LoopBounds[we.PC] != 0 {
			return w, err
		}
		opt.LoopBounds[we.PC] = clzLoopBound
	}
}
