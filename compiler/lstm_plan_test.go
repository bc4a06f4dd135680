package compiler

import (
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model/formats"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// planCost is a plan's estimated bytes and cycles saved (productOptions).
func planCost(ir *quantize.LSTMIR, ps codegen.Products, k fwsim.Costs) (bytes uint64, saving int64) {
	for i, p := range ps {
		for _, o := range productOptions(ir, i, k) {
			if o.p == p {
				bytes, saving = bytes+o.bytes, saving+o.saving
			}
		}
	}
	return bytes, saving
}

// planProducts keeps within its room, saves no less with more room, and takes the choices
// the costs call for: the biases in one table, the sign tables where the room is short, and
// every input from all its rows (no sign branch) where it is not.
func TestPlanProducts(t *testing.T) {
	ir := shippedLSTMIR(t, 5000)
	p, err := fwsim.LookupProfile("dpa")
	if err != nil {
		t.Fatal(err)
	}
	// a table holds at least one row of the gates' 16 packed words, 128 bytes (x0's proven
	// range is a few rows)
	if ps := planProducts(ir, 127, p.Costs); ps != nil {
		t.Errorf("a plan %s within 127 bytes", ps)
	}
	last := int64(0)
	for _, room := range []uint64{20 << 10, 100 << 10, 200 << 10, 250 << 10, 400 << 10, 1 << 30} {
		ps := planProducts(ir, room, p.Costs)
		if err := checkPlan(ir, ps); err != nil {
			t.Fatalf("room %d: %v", room, err)
		}
		bytes, saving := planCost(ir, ps, p.Costs)
		t.Logf("room %7d: %s, %d bytes, saves %d cycles", room, ps, bytes, saving)
		if bytes > room || saving < last || strings.Count(ps.String(), "b") != 1 {
			t.Errorf("room %d: plan %s takes %d bytes and saves %d cycles (%d with less room)", room, ps, bytes, saving, last)
		}
		last = saving
		switch room {
		case 250 << 10: // the default budget's room: a sign table for most units of h
			if strings.Count(ps.String(), "s") < ir.Hidden/2 {
				t.Errorf("room %d: plan %s", room, ps)
			}
		case 1 << 30: // room for everything: every input from all its rows
			if strings.ContainsAny(ps.String(), "s") || strings.Count(ps.String(), ".") != 3 {
				t.Errorf("room %d: plan %s", room, ps)
			}
		}
	}
}

// checkPlan is codegen's check of a plan, through printing it.
func checkPlan(ir *quantize.LSTMIR, ps codegen.Products) error {
	_, err := codegen.LSTM(ir, codegen.Options{Form: codegen.FormTable, Products: ps})
	return err
}

// A report records its plan, or (before plans) how many of the last units read all their
// rows; a plan that is no plan is an error.
func TestRecordedProducts(t *testing.T) {
	ir := shippedLSTMIR(t, 2000)
	x := strings.Repeat(".", ir.Pre.Out)
	for _, c := range []struct {
		g    artifact.GoldenInfo
		want string
	}{
		{artifact.GoldenInfo{}, ""},
		{artifact.GoldenInfo{Tables: 5}, x + ".......rrrrr"},
		{artifact.GoldenInfo{Products: "b" + x[1:] + "ssssssssssrr"}, "b" + x[1:] + "ssssssssssrr"},
		{artifact.GoldenInfo{Tables: 13}, "error"},
		{artifact.GoldenInfo{Products: "bq"}, "error"},
	} {
		got := ""
		if ps, err := recordedProducts(ir, &c.g); err != nil {
			got = "error"
		} else {
			got = ps.String()
		}
		if got != c.want {
			t.Errorf("%+v: plan %q, want %q", c.g, got, c.want)
		}
	}
}

// shippedLSTMIR is the shipped LSTM quantized on n sampled RL-CC states.
func shippedLSTMIR(t *testing.T, n int) *quantize.LSTMIR {
	t.Helper()
	m, _, err := formats.Load(lstmONNX, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testutil.RLCCRows(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := quantize.LSTM(m, quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout)), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ir
}
