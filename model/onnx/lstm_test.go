package onnx

import (
	"math"
	"reflect"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// stepTol is the agreement asked of the float LSTM against torch at every step of a sequence.
const stepTol = 1e-5

// TestSequences runs both layouts of the shipped LSTM policy over torch's multi-step sequences,
// each from the zero state with the state carried by the IR, and compares y and the state h
// with torch's at every step.
func TestSequences(t *testing.T) {
	const seqs, steps, inputs, hidden = 8, 32, 4, 12
	ref := readRef(t, "rlcc_lstm.steps.csv")
	if len(ref.Data) != seqs*steps || len(ref.Data[0]) != 2+inputs+1+hidden {
		t.Fatalf("rlcc_lstm.steps.csv has %d rows of %d columns, want %d of %d", len(ref.Data), len(ref.Data[0]), seqs*steps, 2+inputs+1+hidden)
	}
	for _, file := range []string{"rlcc_lstm.onnx", "rlcc_lstm_batch_first.onnx"} {
		t.Run(file, func(t *testing.T) {
			m := parseFile(t, file)
			var st *model.State
			var maxY, maxH float64
			for i, row := range ref.Data {
				seq, step := row[0], row[1]
				if want := float64(i / steps); seq != want || step != float64(i%steps) {
					t.Fatalf("line %d: seq %v step %v, want seq %v step %d", i+2, seq, step, want, i%steps)
				}
				if step == 0 {
					st = m.NewState()
				}
				y := m.Eval(st, row[2:2+inputs])
				check := func(what string, got, want []float64, worst *float64) {
					for j := range want {
						d := math.Abs(got[j] - want[j])
						*worst = max(*worst, d)
						if !(d <= stepTol) {
							t.Errorf("line %d (seq %v step %v): %s[%d] = %v, torch says %v (off by %.3g)", i+2, seq, step, what, j, got[j], want[j], d)
						}
					}
				}
				check("y", y, row[2+inputs:3+inputs], &maxY)
				check("h", st.H, row[3+inputs:], &maxH)
			}
			t.Logf("%s: %d sequences × %d steps from the zero state, max |Δ| y %.3g, h %.3g", file, seqs, steps, maxY, maxH)
		})
	}
}

// TestBatchFirstSameIR: the Transposes torch writes around nn.LSTM(batch_first=True) change
// nothing, so both exports of the same weights import to the same IR.
func TestBatchFirstSameIR(t *testing.T) {
	a, b := parseFile(t, "rlcc_lstm.onnx"), parseFile(t, "rlcc_lstm_batch_first.onnx")
	if !reflect.DeepEqual(a.Inputs, b.Inputs) {
		t.Errorf("inputs %q and %q", a.Inputs, b.Inputs)
	}
	if !reflect.DeepEqual(a.Layers, b.Layers) {
		t.Errorf("the batch_first export imports to different layers")
	}
}

// lstmBatchFirstGraph is lstmGraph as torch writes it for nn.LSTM(batch_first=True): Transposes
// around the LSTM and out[:, -1] (Gather on axis 1).
func lstmBatchFirstGraph(perm1, perm2 []int64) pbGraph {
	g := lstmGraph()
	g.inits = append(g.inits, i64("ax1", []int64{1}, 1), i64("last", nil, -1))
	tr := func(name, in, out string, perm []int64) pbNode {
		n := node("Transpose", name, []string{in}, out)
		if perm != nil {
			n.attrs = []pbAttr{aInts("perm", perm...)}
		}
		return n
	}
	g.nodes = []pbNode{
		node("Unsqueeze", "unsq", []string{"x", "ax1"}, "xb"),
		tr("/lstm/Transpose", "xb", "x3", perm1),
		{op: "LSTM", name: "lstm", in: []string{"x3", "W", "R", "B", "", "h0", "c0"},
			out: []string{"Y", "hn", "cn"}, attrs: []pbAttr{aInt("hidden_size", 1)}},
		node("Squeeze", "sq", []string{"Y", "ax1"}, "Ys"),
		tr("/lstm/Transpose_1", "Ys", "Yb", perm2),
		node("Gather", "last", []string{"Yb", "last"}, "y", aInt("axis", 1)),
	}
	return g
}

func TestTranspose(t *testing.T) {
	swap := []int64{1, 0, 2}
	want, err := Parse(pbModel{opset: 14, graph: lstmGraph()}.encode())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(pbModel{opset: 14, graph: lstmBatchFirstGraph(swap, swap)}.encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Layers, want.Layers) {
		t.Errorf("batch-first layers %+v, want %+v", got.Layers, want.Layers)
	}

	for _, tc := range []struct {
		name         string
		perm1, perm2 []int64
		want         string
	}{
		{"feature axis moved", []int64{0, 2, 1}, swap,
			`node "/lstm/Transpose" (Transpose): perm [0 2 1] on shape [1 1 1] is not supported: nicc accepts a Transpose only as the swap of the batch and sequence axes of a [batch seq feature] tensor (perm [1 0 2]), as torch writes around nn.LSTM(batch_first=True)`},
		{"reversed", swap, []int64{2, 1, 0}, `node "/lstm/Transpose_1" (Transpose): perm [2 1 0] on shape [1 1 1] is not supported`},
		{"identity", []int64{0, 1, 2}, swap, `node "/lstm/Transpose" (Transpose): perm [0 1 2] on shape [1 1 1] is not supported`},
		{"no perm", nil, swap, `node "/lstm/Transpose" (Transpose): no perm (all axes reversed), so perm [2 1 0] on shape [1 1 1] is not supported`},
		{"repeated axis", []int64{1, 1, 2}, swap, `perm [1 1 2] on shape [1 1 1] is not supported`},
		{"too many axes", make([]int64, 17), swap, `node "/lstm/Transpose" (Transpose): perm has 17 axes, over 16`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(pbModel{opset: 14, graph: lstmBatchFirstGraph(tc.perm1, tc.perm2)}.encode())
			checkErr(t, err, tc.want)
		})
	}

	// The swap is refused where the vector is not on the last axis: [1 2 1] would become
	// [2 1 1].
	w := fl("W", []int64{3, 2}, 1, 2, 3, 4, 5, 6)
	g := gemmGraph([]pbNode{
		node("MatMul", "mm", []string{"x", "W"}, "z"),
		node("Unsqueeze", "u", []string{"z", "ax"}, "z3"),
		node("Transpose", "t", []string{"z3"}, "y", aInts("perm", swap...)),
	}, w, i64("ax", []int64{1}, 2))
	_, err = Parse(pbModel{opset: 13, graph: g}.encode())
	checkErr(t, err, `node "t" (Transpose): perm [1 0 2] on shape [1 2 1] is not supported`)

	// A perm of the wrong type, and a Transpose with two inputs.
	g.nodes[2] = node("Transpose", "t", []string{"z3"}, "y", aInt("perm", 1))
	_, err = Parse(pbModel{opset: 13, graph: g}.encode())
	checkErr(t, err, `node "t" (Transpose): attribute "perm" is INT, want INTS`)
	g.nodes[2] = node("Transpose", "t", []string{"z3", "W"}, "y", aInts("perm", swap...))
	_, err = Parse(pbModel{opset: 13, graph: g}.encode())
	checkErr(t, err, `node "t" (Transpose): has 2 inputs, want 1`)
}
