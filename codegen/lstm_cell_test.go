package codegen

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// The cell table, read at the offsets the C uses from its pointer, holds quantize's tanh_c
// and new code at every t = u >> CellShift, both offsets fit a load's 12 bits, and every cell
// u = f·c + i·g the tables allow (f, i in [0, 128], c and g any entries) has its t in the
// table.
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
	g := &lstmGen{ir: ir, fn: "f"}
	tab := g.cellTable().Values
	mid := cellMid(ir)
	offT, offC := cellOffsets(ir)
	n := int64(len(ir.TanhC))
	for _, off := range []int64{offT, offC} {
		if off < -2048 || off > 2047 {
			t.Errorf("offset %d does not fit 12 bits", off)
		}
	}
	for k := range n {
		at := func(off int64) int64 {
			v, err := strconv.ParseInt(tab[mid+k+ir.CellLo+off], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if got, want := at(offT), int64(ir.TanhC[k]); got != want {
			t.Fatalf("t %d: tanh %d, want %d", k+ir.CellLo, got, want)
		}
		if got, want := at(offC), int64(ir.CellEnc[k]); got != want {
			t.Fatalf("t %d: c' %d, want %d", k+ir.CellLo, got, want)
		}
	}
	for _, f := range []int64{0, 128} {
		for _, i := range []int64{0, 128} {
			for _, c := range []int16{slices.Min(ir.CellDec), slices.Max(ir.CellDec)} {
				for _, gv := range []int16{slices.Min(ir.GTable), slices.Max(ir.GTable)} {
					if u := f*int64(c) + i*int64(gv); u>>ir.CellShift < ir.CellLo || u>>ir.CellShift >= ir.CellLo+n {
						t.Errorf("u %d (f %d, c %d, i %d, g %d) is beyond the cell table", u, f, c, i, gv)
					}
				}
			}
		}
	}
}
