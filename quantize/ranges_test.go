package quantize_test

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/quantize"
)

func TestPadRangeAndRowRanges(t *testing.T) {
	for _, c := range []struct{ lo, hi, wantLo, wantHi float64 }{
		{0, 64, -1, 65}, // 1/64 of the span
		{1000, 1001, 999.0224609375, 1001.9775390625}, // 1/1024 of the magnitude beats 1/64 of a small span
		{0, 0, -1, 1}, // nothing to scale by
	} {
		lo, hi := quantize.PadRange(c.lo, c.hi)
		if math.Abs(lo-c.wantLo) > 1e-9 || math.Abs(hi-c.wantHi) > 1e-9 {
			t.Errorf("PadRange(%v, %v) = %v, %v; want %v, %v", c.lo, c.hi, lo, hi, c.wantLo, c.wantHi)
		}
	}
	lo, hi := quantize.RowRanges(2, [][]float64{{0, math.NaN()}}, [][]float64{{64, math.NaN()}})
	if lo[0] != -1 || hi[0] != 65 || lo[1] != -1-2.0/64 || hi[1] != 1+2.0/64 {
		t.Errorf("RowRanges: %v %v; want [-1 %v] [65 %v] (a column of NaN is [-1, 1], padded)", lo, hi, -1-2.0/64, 1+2.0/64)
	}
}
