package quantize_test

import (
	"os"
	"testing"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/quantize"
)

func shippedLSTM(t *testing.T, n int) (*model.Model, *quantize.LSTMIR, [][]float64) {
	t.Helper()
	b, err := os.ReadFile("../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	d, err := distill.DefaultRLCC.Sample(n, 1)
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
	ir, err := quantize.LSTM(m, rlccInputs(), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m, ir, rows
}

func TestLSTMShipped(t *testing.T) {
	_, ir, _ := shippedLSTM(t, 20000)
	t.Logf("in shift %v pre shift %v gate shift %v cell scale %g out scale %g mult %d>>%d fidelity %+v",
		ir.InShift, ir.Pre.Shift, ir.Gates.Shift, ir.CellScale, ir.OutScale, ir.OutMult, ir.OutShift, ir.Fidelity)
	t.Logf("pre scale %v", ir.PreScale)
	t.Logf("gate W0 %v", ir.Gates.W[0])
}
