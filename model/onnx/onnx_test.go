package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

const models = "../../testdata/models"

// refTol is the agreement asked of the importer against torch's float32 outputs.
const refTol = 1e-4

func parseFile(t *testing.T, name string) *model.Model {
	t.Helper()
	data, err := model.ReadFile(filepath.Join(models, name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(model.InFile(name, err))
	}
	return m
}

func readRef(t *testing.T, name string) *model.Rows {
	t.Helper()
	f, err := os.Open(filepath.Join(models, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := model.ReadCSV(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows
}

// TestReference evaluates each committed ONNX model on every row of the .ref.csv written with it
// and compares with torch's outputs: y, and for the LSTM the final state hn and cn.
func TestReference(t *testing.T) {
	for _, tc := range []struct {
		file    string
		ref     string // the .ref.csv written with it
		inputs  int
		outputs int
		hidden  int // LSTM hidden size; 0 for feed-forward models
		names   []string
	}{
		{"rlcc_teacher.onnx", "rlcc_teacher.ref.csv", 4, 1, 0, []string{"a_prev", "o", "a_prev2", "o_prev"}},
		{"ops_mix.onnx", "ops_mix.ref.csv", 4, 2, 0, []string{"x[0]", "x[1]", "x[2]", "x[3]"}},
		{"rlcc_lstm.onnx", "rlcc_lstm.ref.csv", 4, 1, 12, []string{"a_prev", "o", "a_prev2", "o_prev"}},
		// gen/lstm.py checks that torch's batch_first module gives the same bits on every row.
		{"rlcc_lstm_batch_first.onnx", "rlcc_lstm.ref.csv", 4, 1, 12, []string{"a_prev", "o", "a_prev2", "o_prev"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m := parseFile(t, tc.file)
			if !slices.Equal(m.Inputs, tc.names) {
				t.Errorf("inputs %q, want %q", m.Inputs, tc.names)
			}
			if m.NumOutputs() != tc.outputs {
				t.Fatalf("%d outputs, want %d", m.NumOutputs(), tc.outputs)
			}
			wantKind := model.KindMLP
			if tc.hidden > 0 {
				wantKind = model.KindLSTM
			}
			if m.Kind() != wantKind {
				t.Errorf("kind %v, want %v", m.Kind(), wantKind)
			}
			ref := readRef(t, tc.ref)
			h := tc.hidden
			width := tc.inputs + 2*h + tc.outputs + 2*h
			if len(ref.Data[0]) != width {
				t.Fatalf("ref has %d columns, want %d", len(ref.Data[0]), width)
			}
			var maxY, maxH, maxC float64
			for i, row := range ref.Data {
				line := i + 2 // the header is line 1
				x := row[:tc.inputs]
				st := m.NewState()
				if h > 0 {
					copy(st.H, row[tc.inputs:tc.inputs+h])
					copy(st.C, row[tc.inputs+h:tc.inputs+2*h])
				}
				got := m.Eval(st, x)
				want := row[tc.inputs+2*h:]
				check := func(what string, got, want []float64, worst *float64) {
					for j := range got {
						d := math.Abs(got[j] - want[j])
						*worst = max(*worst, d)
						if !(d <= refTol) {
							t.Errorf("%s/line:%d: %s[%d] = %v, torch says %v (off by %.3g)", tc.file, line, what, j, got[j], want[j], d)
						}
					}
				}
				check("y", got, want[:tc.outputs], &maxY)
				if h > 0 {
					check("hn", st.H, want[tc.outputs:tc.outputs+h], &maxH)
					check("cn", st.C, want[tc.outputs+h:], &maxC)
				}
			}
			t.Logf("%s: %d rows, max |Δ| y %.3g, hn %.3g, cn %.3g", tc.file, len(ref.Data), maxY, maxH, maxC)
		})
	}
}

// TestTeacherMatchesJSON: the teacher's ONNX export and its native JSON hold the same float32
// weights, so the two must compute the same function.
func TestTeacherMatchesJSON(t *testing.T) {
	fromONNX := parseFile(t, "rlcc_teacher.onnx")
	fromJSON, err := model.Load(filepath.Join(models, "rlcc_teacher.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fromONNX.Layers) != len(fromJSON.Layers) {
		t.Fatalf("%d layers from ONNX, %d from JSON", len(fromONNX.Layers), len(fromJSON.Layers))
	}
	for i := range fromJSON.Layers {
		a, b := &fromONNX.Layers[i], &fromJSON.Layers[i]
		if a.In != b.In || a.Out != b.Out || a.Act != b.Act {
			t.Errorf("layer %d: ONNX %d->%d %v, JSON %d->%d %v", i, a.In, a.Out, a.Act, b.In, b.Out, b.Act)
		}
	}
	var worst float64
	for _, row := range readRef(t, "rlcc_teacher.ref.csv").Data {
		x := row[:4]
		a, b := fromONNX.Eval(nil, x)[0], fromJSON.Eval(nil, x)[0]
		worst = max(worst, math.Abs(a-b))
	}
	if worst > 1e-12 {
		t.Errorf("ONNX and JSON teachers differ by up to %g", worst)
	}
	t.Logf("max |ONNX - JSON| = %g", worst)
}

// TestModelSerializes: an imported model saves as native JSON and loads back the same.
func TestModelSerializes(t *testing.T) {
	for _, f := range []string{"rlcc_teacher.onnx", "ops_mix.onnx", "rlcc_lstm.onnx", "rlcc_lstm_batch_first.onnx"} {
		m := parseFile(t, f)
		b, err := model.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := model.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		x := []float64{1, 0.5, 0.9, 20}
		s1, s2 := m.NewState(), back.NewState()
		for step := 0; step < 3; step++ {
			if a, b := m.Eval(s1, x), back.Eval(s2, x); !slices.Equal(a, b) {
				t.Errorf("%s: step %d: %v before the round trip, %v after", f, step, a, b)
			}
		}
	}
}

func TestOpsMixLayers(t *testing.T) {
	m := parseFile(t, "ops_mix.onnx")
	var acts []string
	for _, l := range m.Layers {
		acts = append(acts, l.Act.String())
	}
	want := []string{"leaky_relu", "sigmoid", "clip", "clip", "relu", "clip", "tanh"}
	if !slices.Equal(acts, want) {
		t.Fatalf("activations %q, want %q", acts, want)
	}
	l := m.Layers
	if float32(l[0].Alpha) != 0.1 {
		t.Errorf("leaky_relu alpha %v", l[0].Alpha)
	}
	if float32(l[2].Lo) != -0.5 || float32(l[2].Hi) != 0.5 {
		t.Errorf("hardtanh bounds [%v, %v]", l[2].Lo, l[2].Hi)
	}
	if l[3].Lo != -math.MaxFloat64 || float32(l[3].Hi) != 0.3 {
		t.Errorf("clamp(max=0.3) bounds [%v, %v]", l[3].Lo, l[3].Hi)
	}
	if float32(l[5].Lo) != -0.2 || l[5].Hi != math.MaxFloat64 {
		t.Errorf("clamp(min=-0.2) bounds [%v, %v]", l[5].Lo, l[5].Hi)
	}
	if l[2].B == nil || l[4].B == nil || l[6].B != nil {
		t.Errorf("MatMul+Add layers should have biases and the last layer none")
	}
}

func TestLSTMGateOrder(t *testing.T) {
	// One hidden unit, one input: ONNX rows are i, o, f, c; the IR's are i, f, g, o.
	g := lstmGraph()
	g.inits[0] = fl("W", []int64{1, 4, 1}, 1, 2, 3, 4)
	g.inits[1] = fl("R", []int64{1, 4, 1}, 10, 20, 30, 40)
	g.inits[2] = fl("B", []int64{1, 8}, 100, 200, 300, 400, 1000, 2000, 3000, 4000)
	m, err := Parse(pbModel{opset: 14, graph: g}.encode())
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layers[0]
	col := func(w [][]float64) []float64 {
		var c []float64
		for _, r := range w {
			c = append(c, r[0])
		}
		return c
	}
	for _, c := range []struct {
		what      string
		got, want []float64
	}{
		{"W", col(l.W), []float64{1, 3, 4, 2}},
		{"R", col(l.R), []float64{10, 30, 40, 20}},
		{"B", l.B, []float64{100, 300, 400, 200}},
		{"RB", l.RB, []float64{1000, 3000, 4000, 2000}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// lstmGraph is a 1-input, 1-hidden LSTM written the way torch writes one.
func lstmGraph() pbGraph {
	return pbGraph{
		inits: []pbTensor{
			fl("W", []int64{1, 4, 1}, 1, 1, 1, 1),
			fl("R", []int64{1, 4, 1}, 1, 1, 1, 1),
			fl("B", []int64{1, 8}, 0, 0, 0, 0, 0, 0, 0, 0),
			i64("ax", []int64{1}, 0),
		},
		nodes: []pbNode{
			node("Unsqueeze", "unsq", []string{"x", "ax"}, "x3"),
			{op: "LSTM", name: "lstm", in: []string{"x3", "W", "R", "B", "", "h0", "c0"},
				out: []string{"Y", "hn", "cn"}, attrs: []pbAttr{aInt("hidden_size", 1)}},
			node("Squeeze", "sq", []string{"hn", "ax"}, "y"),
		},
		inputs:  []pbValue{vec("x", 1, 1), vec("h0", 1, 1, 1), vec("c0", 1, 1, 1)},
		outputs: []pbValue{vec("y", 1, 1), vec("hn", 1, 1, 1), vec("cn", 1, 1, 1)},
	}
}

// dense is a graph x[1,3] -> Gemm -> act -> y built from the given nodes and initializers.
func gemmGraph(nodes []pbNode, inits ...pbTensor) pbGraph {
	return pbGraph{nodes: nodes, inits: inits,
		inputs: []pbValue{vec("x", -1, 3)}, outputs: []pbValue{vec("y", -1, 2)}}
}

type handBuiltCase struct {
	name  string
	opset int64
	g     pbGraph
	want  []float64 // y for x = handBuiltX
}

var handBuiltX = []float64{0.5, -1, 2}

// handBuilt is a set of small graphs using what torch does not write in the committed files,
// with hand-computed outputs. FuzzParse uses them as seeds too.
func handBuilt() []handBuiltCase {
	w := fl("W", []int64{3, 2}, 1, 2, 3, 4, 5, 6) // K×N
	wT := fl("WT", []int64{2, 3}, 1, 3, 5, 2, 4, 6)
	c := fl("C", []int64{2}, 0.5, -0.25)
	// x·W = [0.5-3+10, 1-4+12] = [7.5, 9]
	return []handBuiltCase{
		{"gemm alpha beta", 13, gemmGraph([]pbNode{
			node("Gemm", "g", []string{"x", "W", "C"}, "y", aFloat("alpha", 2), aFloat("beta", 4)),
		}, w, c), []float64{15 + 2, 18 - 1}},
		{"gemm transB, bias [1,2] typed", 13, gemmGraph([]pbNode{
			node("Gemm", "g", []string{"x", "WT", "C2"}, "y", aInt("transB", 1)),
		}, wT, pbTensor{name: "C2", dims: []int64{1, 2}, dtype: dtFloat, f: []float32{0.5, -0.25}, typed: true}),
			[]float64{8, 8.75}},
		{"gemm transA after reshape, scalar bias", 13, gemmGraph([]pbNode{
			node("Constant", "shape", nil, "s", aTensor("value", i64("", []int64{2}, 3, -1))),
			node("Reshape", "r", []string{"x", "s"}, "xc"),
			node("Gemm", "g", []string{"xc", "W", "one"}, "z", aInt("transA", 1)),
			node("Identity", "id", []string{"z"}, "y"),
		}, w, fl("one", nil, 1)), []float64{8.5, 10}},
		{"matmul add relu, double weights", 13, gemmGraph([]pbNode{
			node("MatMul", "mm", []string{"x", "Wd"}, "z"),
			node("Add", "add", []string{"Cd", "z"}, "z2"),
			node("Add", "add2", []string{"z2", "Cd"}, "z3"),
			node("Relu", "relu", []string{"z3"}, "y"),
		}, pbTensor{name: "Wd", dims: []int64{3, 2}, dtype: dtDouble, d: []float64{1, 2, 3, 4, 5, 6}},
			pbTensor{name: "Cd", dims: []int64{1, 1, 2}, dtype: dtDouble, d: []float64{-8, 1}, typed: true}),
			[]float64{0, 11}},
		{"identity weights, leaky relu default alpha", 13, gemmGraph([]pbNode{
			node("Identity", "wid", []string{"W"}, "W2"),
			node("MatMul", "mm", []string{"x", "W2"}, "z"),
			node("Constant", "k", nil, "neg", aTensor("value", fl("", []int64{2}, -10, -10))),
			node("Add", "add", []string{"z", "neg"}, "z2"),
			node("LeakyRelu", "lr", []string{"z2"}, "y"),
		}, w), []float64{-0.025, -0.01}},
		{"clip inline bounds, min > max", 13, gemmGraph([]pbNode{
			node("MatMul", "mm", []string{"x", "W"}, "z"),
			node("Constant", "lo", nil, "lo", pbAttr{name: "value_float", typ: atFloat, f: 9}),
			node("Constant", "hi", nil, "hi", pbAttr{name: "value_float", typ: atFloat, noType: true, f: 8}),
			node("Clip", "clip", []string{"z", "lo", "hi"}, "y"),
		}, w), []float64{8, 8}},
		{"clip infinite max, sigmoid-free flatten", 11, gemmGraph([]pbNode{
			node("Flatten", "fl", []string{"x"}, "xf", aInt("axis", -1)),
			node("Unsqueeze", "u", []string{"xf"}, "xu", aInts("axes", 0, -1)),
			node("Squeeze", "s", []string{"xu"}, "xs"),
			node("Unsqueeze", "u2", []string{"xs"}, "x2", aInts("axes", 0)),
			node("Gemm", "g", []string{"x2", "W"}, "z"),
			node("Clip", "clip", []string{"z", "", "inf"}, "y"),
		}, w, fl("inf", nil, float32(math.Inf(1)))), []float64{7.5, 9}},
		{"transpose batch and sequence", 13, gemmGraph([]pbNode{
			node("MatMul", "mm", []string{"x", "W"}, "z"),
			node("Unsqueeze", "u", []string{"z", "ax"}, "z3"),
			node("Transpose", "t", []string{"z3"}, "zt", aInts("perm", 1, 0, 2)),
			node("Squeeze", "s", []string{"zt", "ax"}, "y"),
		}, w, i64("ax", []int64{1}, 0)), []float64{7.5, 9}},
	}
}

// TestHandBuilt checks ops torch does not write in the committed files against hand-computed
// values.
func TestHandBuilt(t *testing.T) {
	for _, tc := range handBuilt() {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(pbModel{opset: tc.opset, graph: tc.g}.encode())
			if err != nil {
				t.Fatal(err)
			}
			got := m.Eval(nil, handBuiltX)
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Errorf("y = %v, want %v", got, tc.want)
					break
				}
			}
			if _, err := model.Marshal(m); err != nil {
				t.Errorf("imported model does not save: %v", err)
			}
		})
	}
}

func TestClipBoundsAreFinite(t *testing.T) {
	g := gemmGraph([]pbNode{
		node("MatMul", "mm", []string{"x", "W"}, "z"),
		node("Clip", "clip", []string{"z", "ninf"}, "y"),
	}, fl("W", []int64{3, 2}, 1, 2, 3, 4, 5, 6), fl("ninf", nil, float32(math.Inf(-1))))
	m, err := Parse(pbModel{opset: 13, graph: g}.encode())
	if err != nil {
		t.Fatal(err)
	}
	if l := m.Layers[0]; l.Lo != -math.MaxFloat64 || l.Hi != math.MaxFloat64 {
		t.Errorf("clip bounds [%v, %v], want ±MaxFloat64", l.Lo, l.Hi)
	}
}

func TestErrors(t *testing.T) {
	w := fl("W", []int64{3, 2}, 1, 2, 3, 4, 5, 6)
	gemm := func(nodes ...pbNode) pbGraph { return gemmGraph(nodes, w) }
	mm := node("MatMul", "/fc/MatMul", []string{"x", "W"}, "z")
	for _, tc := range []struct {
		name  string
		opset int64
		g     pbGraph
		want  string
	}{
		{"unsupported op", 13, gemm(mm, node("Softmax", "/Softmax", []string{"z"}, "y")),
			`node "/Softmax" (Softmax): unsupported op`},
		{"conv", 13, gemm(node("Conv", "/0/Conv", []string{"x", "W"}, "y")),
			`node "/0/Conv" (Conv): unsupported op`},
		{"unnamed node", 13, gemm(mm, node("Erf", "", []string{"z"}, "y")), `node 1 (Erf): unsupported op`},
		{"custom domain", 13, gemm(pbNode{op: "Relu", name: "r", domain: "com.example", in: []string{"x"}, out: []string{"y"}}),
			`node "r" (Relu): op domain "com.example"`},
		{"opset 9", 9, gemm(mm), "ai.onnx opset 9 is not supported"},
		{"no opset", 0, gemm(mm), "no ai.onnx opset"},
		{"nan weight", 13, gemmGraph([]pbNode{mm}, fl("W", []int64{3, 2}, 1, 2, float32(math.NaN()), 4, 5, 6)),
			`node "/fc/MatMul" (MatMul): initializer "W": element 2 is NaN`},
		{"inf bias", 13, gemmGraph([]pbNode{node("Gemm", "g", []string{"x", "W", "C"}, "y")}, w,
			fl("C", []int64{2}, 0, float32(math.Inf(1)))), `initializer "C": element 1 is +Inf`},
		{"gemm shape mismatch", 13, gemmGraph([]pbNode{node("Gemm", "/fc/Gemm", []string{"x", "W4"}, "y", aInt("transB", 1))},
			fl("W4", []int64{2, 4}, 1, 2, 3, 4, 5, 6, 7, 8)),
			`node "/fc/Gemm" (Gemm): weight B "W4" has shape [2 4] (transB=1), which does not fit an input of width 3`},
		{"raw data short", 13, gemmGraph([]pbNode{mm}, fl("W", []int64{3, 3}, 1, 2, 3, 4, 5, 6)),
			`node "/fc/MatMul" (MatMul): initializer "W": raw_data has 24 bytes, want 36`},
		{"raw data length", 13, gemmGraph([]pbNode{mm}, fl("W", []int64{3, 2}, 1, 2, 3, 4, 5)),
			`initializer "W": raw_data has 20 bytes, want 24`},
		{"huge dims", 13, gemmGraph([]pbNode{mm}, fl("W", []int64{1 << 40, 1 << 40}, 1)),
			`tensor "W" has shape [1099511627776 1099511627776], over 67108864 elements`},
		{"big dims, no data", 13, gemmGraph([]pbNode{mm}, fl("W", []int64{3, 4096}, 1)),
			`initializer "W": raw_data has 4 bytes, want 49152`},
		{"bias shape", 13, gemmGraph([]pbNode{node("Gemm", "g", []string{"x", "W", "C"}, "y")}, w,
			fl("C", []int64{3}, 1, 2, 3)), `initializer "C" has shape [3], which does not broadcast to [1 2]`},
		{"two activations", 13, gemm(mm, node("Relu", "r1", []string{"z"}, "z2"), node("Tanh", "t", []string{"z2"}, "y")),
			`node "t" (Tanh): activation does not follow a dense layer`},
		{"activation first", 13, gemm(node("Relu", "r", []string{"x"}, "x2"), node("MatMul", "m", []string{"x2", "W"}, "y")),
			`node "r" (Relu): activation does not follow`},
		{"add after activation", 13, gemmGraph([]pbNode{mm, node("Relu", "r", []string{"z"}, "z2"), node("Add", "a", []string{"z2", "C"}, "y")}, w,
			fl("C", []int64{2}, 1, 2)), `node "a" (Add): adds a constant that does not follow`},
		{"add twice the chain", 13, gemm(mm, node("Add", "a", []string{"z", "z"}, "y")), `node "a" (Add): uses the chain's value "z" twice`},
		{"fork", 13, gemm(mm, node("Relu", "r", []string{"z"}, "z2"), node("Tanh", "t", []string{"z"}, "y")),
			`node "t" (Tanh): input "z" is not the chain's current value`},
		{"unknown attribute", 13, gemm(node("MatMul", "m", []string{"x", "W"}, "y", aInt("foo", 1))),
			`node "m" (MatMul): unsupported attribute "foo"`},
		{"clip attributes at opset 11", 11, gemm(mm, node("Clip", "c", []string{"z"}, "y", aFloat("min", 0))),
			`node "c" (Clip): unsupported attribute "min"`},
		{"attribute type", 13, gemm(node("Gemm", "g", []string{"x", "W"}, "y", aStr("alpha", "2"))),
			`node "g" (Gemm): attribute "alpha" is STRING, want FLOAT`},
		{"gather a slice", 13, gemmGraph([]pbNode{mm, node("Gather", "ga", []string{"z", "i"}, "y", aInt("axis", 1))}, w,
			i64("i", nil, 0)), `node "ga" (Gather): selects part of the vector`},
		{"reshape to batch 2", 13, gemmGraph([]pbNode{
			node("Reshape", "r", []string{"x", "s"}, "x2"),
			node("MatMul", "m", []string{"x2", "W"}, "y")}, w, i64("s", []int64{2}, 1, 4)),
			`node "r" (Reshape): output shape [1 4] does not hold the 3-element vector`},
		{"weight from graph input", 13, pbGraph{nodes: []pbNode{node("MatMul", "m", []string{"x", "W"}, "y")},
			inputs: []pbValue{vec("x", 1, 3), vec("W", 3, 2)}, outputs: []pbValue{vec("y", 1, 2)}},
			`graph has 2 data inputs ["x", "W"]`},
		{"output not at end", 13, pbGraph{nodes: []pbNode{mm, node("Relu", "r", []string{"z"}, "y")}, inits: []pbTensor{w},
			inputs: []pbValue{vec("x", 1, 3)}, outputs: []pbValue{vec("z", 1, 2)}},
			`graph output "z" is not the end of the chain`},
		{"batch 2 input", 13, pbGraph{nodes: []pbNode{mm}, inits: []pbTensor{w},
			inputs: []pbValue{vec("x", 2, 3)}, outputs: []pbValue{vec("z", 2, 2)}},
			`graph input "x" has dimension 0 of size 2`},
		{"no layers", 13, pbGraph{nodes: []pbNode{node("Identity", "i", []string{"x"}, "y")},
			inputs: []pbValue{vec("x", 1, 3)}, outputs: []pbValue{vec("y", 1, 3)}}, "graph has no Gemm, MatMul or LSTM layer"},
		{"redefined value", 13, gemm(mm, node("Relu", "r", []string{"z"}, "W")), `node "r" (Relu): output "W" is already defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(pbModel{opset: tc.opset, graph: tc.g}.encode())
			checkErr(t, err, tc.want)
		})
	}
}

func TestLSTMErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(g *pbGraph)
		want string
	}{
		{"bidirectional", func(g *pbGraph) { g.nodes[1].attrs = append(g.nodes[1].attrs, aStr("direction", "bidirectional")) },
			`node "lstm" (LSTM): direction "bidirectional" is not supported`},
		{"clip", func(g *pbGraph) { g.nodes[1].attrs = append(g.nodes[1].attrs, aFloat("clip", 3)) },
			`node "lstm" (LSTM): attribute clip is not supported`},
		{"input_forget", func(g *pbGraph) { g.nodes[1].attrs = append(g.nodes[1].attrs, aInt("input_forget", 1)) },
			`input_forget=1 is not supported`},
		{"layout", func(g *pbGraph) { g.nodes[1].attrs = append(g.nodes[1].attrs, aInt("layout", 1)) },
			`layout=1 is not supported`},
		{"activations", func(g *pbGraph) {
			g.nodes[1].attrs = append(g.nodes[1].attrs, aStrs("activations", "Sigmoid", "Relu", "Tanh"))
		}, `activations ["Sigmoid" "Relu" "Tanh"] are not supported`},
		{"default activations spelled out", func(g *pbGraph) {
			g.nodes[1].attrs = append(g.nodes[1].attrs, aStrs("activations", "Sigmoid", "Tanh", "Tanh"), aStr("direction", "forward"))
		}, ""},
		{"no initial state", func(g *pbGraph) {
			g.nodes[1].in = g.nodes[1].in[:5]
			g.inputs = g.inputs[:1]
		}, `node "lstm" (LSTM): has no initial_h input`},
		{"state not returned", func(g *pbGraph) { g.outputs = g.outputs[:2] },
			`node "lstm" (LSTM): its Y_c "cn" is not a graph output`},
		{"hidden size", func(g *pbGraph) { g.nodes[1].attrs[0] = aInt("hidden_size", 2) },
			`hidden_size is 2 but R "R" has shape [1 4 1]`},
		{"seq 2", func(g *pbGraph) { g.inputs[0] = vec("x", 2, 1) },
			`graph input "x" has dimension 0 of size 2`},
		{"peepholes", func(g *pbGraph) {
			g.nodes[1].in = append(g.nodes[1].in, "P")
			g.inits = append(g.inits, fl("P", []int64{1, 3}, 0, 0, 0))
		}, `peephole weights P are not supported`},
		{"second LSTM", func(g *pbGraph) {
			g.nodes = append(g.nodes[:2],
				node("Unsqueeze", "u2", []string{"hn", "ax"}, "x4"),
				pbNode{op: "LSTM", name: "lstm2", in: []string{"x4", "W", "R", "B", "", "h0", "c0"},
					out: []string{"Y2", "hn2", "cn2"}})
		}, `node "lstm2" (LSTM): is a second LSTM`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := lstmGraph()
			tc.edit(&g)
			_, err := Parse(pbModel{opset: 14, graph: g}.encode())
			checkErr(t, err, tc.want)
		})
	}
}

// checkErr wants err to be a one-line *model.ParseError containing want, or nil if want is "".
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	var fe *model.ParseError
	if !errors.As(err, &fe) {
		t.Fatalf("error %T %v is not a *model.ParseError", err, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
}

func TestTorchUnsupportedOp(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(models, "bad_softmax.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(data)
	checkErr(t, err, `node "/1/Softmax" (Softmax): unsupported op`)
	if err := model.InFile("bad_softmax.onnx", err); !strings.HasPrefix(err.Error(), "bad_softmax.onnx: node") {
		t.Errorf("with the file: %v", err)
	}
}

// TestTruncated: every proper prefix of a real model is an error, never a panic or a model.
func TestTruncated(t *testing.T) {
	for _, f := range []string{"rlcc_teacher.onnx", "ops_mix.onnx", "rlcc_lstm_batch_first.onnx"} {
		data, err := os.ReadFile(filepath.Join(models, f))
		if err != nil {
			t.Fatal(err)
		}
		wire := 0
		for n := range len(data) {
			_, err := Parse(data[:n])
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Fatalf("%s[:%d]: error %v, want a ParseError", f, n, err)
			}
			if fe.Off >= 0 {
				wire++
				if fe.Off > int64(n) {
					t.Errorf("%s[:%d]: offset %d is past the end", f, n, fe.Off)
				}
			}
		}
		t.Logf("%s: %d prefixes, %d with a wire offset", f, len(data), wire)
	}
}

// TestCorrupt flips every byte of a small model: never a panic, and any model that still parses
// is valid and evaluates.
func TestCorrupt(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(models, "rlcc_teacher.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	parsed := 0
	for i := range data {
		for _, mask := range []byte{0xff, 0x80, 0x01} {
			c := slices.Clone(data)
			c[i] ^= mask
			if m, err := Parse(c); err == nil {
				parsed++
				mustBeUsable(t, m)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		}
	}
	t.Logf("%d of %d corrupted files still parse", parsed, 3*len(data))

	// A length prefix pointing past the end is a wire fault with its offset.
	c := append(slices.Clone(data), 0x0a, 0x7f) // field 1, 127 bytes that are not there
	_, err = Parse(c)
	var fe *model.ParseError
	if !errors.As(err, &fe) || fe.Off != int64(len(data)) {
		t.Errorf("bad length: %v, want a ParseError at offset %d", err, len(data))
	}
}

// TestSharedWeights: one initializer used by thousands of layers is refused before the model
// grows to thousands of copies of it.
func TestSharedWeights(t *testing.T) {
	const k = 256
	w := make([]float32, k*k)
	g := pbGraph{inits: []pbTensor{fl("W", []int64{k, k}, w...)},
		inputs: []pbValue{vec("x", 1, k)}, outputs: []pbValue{vec("y", 1, k)}}
	prev := "x"
	for i := range 100 {
		out := fmt.Sprintf("h%d", i)
		g.nodes = append(g.nodes, node("MatMul", out, []string{prev, "W"}, out))
		prev = out
	}
	g.outputs[0].name = prev
	_, err := Parse(pbModel{opset: 13, graph: g}.encode())
	checkErr(t, err, `node "h64" (MatMul): the model reads over 4194304 weights (initializer "W" has shape [256 256])`)
}

func TestEmptyAndHuge(t *testing.T) {
	_, err := Parse(nil)
	checkErr(t, err, "file is empty")
	_, err = Parse([]byte{0x3a, 0x00}) // an empty graph and no opset
	checkErr(t, err, "no ai.onnx opset")
	_, err = Parse(make([]byte, model.MaxFileBytes+1))
	checkErr(t, err, "file is over the 64 MiB limit")
}

// mustBeUsable checks what every imported model promises: it validates, saves, and evaluates.
func mustBeUsable(t *testing.T, m *model.Model) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatalf("imported model fails validation: %v", err)
	}
	if _, err := model.Marshal(m); err != nil {
		t.Fatalf("imported model does not save: %v", err)
	}
	x := make([]float64, m.NumInputs())
	if y := m.Eval(m.NewState(), x); len(y) != m.NumOutputs() {
		t.Fatalf("eval gave %d outputs, want %d", len(y), m.NumOutputs())
	}
}
