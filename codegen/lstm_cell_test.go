package codegen

import (
	"os"
	"strconv"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// For every cell u = f·c + i·g the shipped LSTM can reach, the cell table's entries at
// u >> 4, read at the offsets the C uses from its pointer, are quantize's tanh_c[(u + 16) >> 5]
// and clamp((u + 64) >> 7, −127, 127), and both offsets fit a load's 12 bits.
func TestCellTableExact(t *testing.T) {
	b, err := os.ReadFile("../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testutil.RLCCRows(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := quantize.LSTM(m, quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout)), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !cellTabled(ir) {
		t.Fatal("the shipped LSTM's cell is not tabled")
	}
	g := &lstmGen{ir: ir, fn: "f"}
	tab := g.cellTable().Values
	lo, hi := cellRange(ir)
	mid := cellMid(ir)
	offT, offC := -lo-mid, hi-lo+1-lo-mid
	for _, off := range []int64{offT, offC} {
		if off < -2048 || off > 2047 {
			t.Errorf("offset %d does not fit 12 bits", off)
		}
	}
	gLo, gHi := int64(ir.GTable[0]), int64(ir.GTable[255])
	for u := -128*128 + 128*min(gLo, 0); u <= 127*128+128*max(gHi, 0); u++ {
		at := func(off int64) int64 {
			v, err := strconv.ParseInt(tab[mid+u>>4+off], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if got, want := at(offT), int64(ir.TanhC[(u+16)>>5-ir.TanhLo]); got != want {
			t.Fatalf("u %d: tanh %d, want %d", u, got, want)
		}
		if got, want := at(offC), min(max((u+64)>>7, -127), 127); got != want {
			t.Fatalf("u %d: c' %d, want %d", u, got, want)
		}
	}
}
