package onnx

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/model"
)

// ExportOpset is the ai.onnx opset Encode writes: Gemm without its C input needs 11; 13 is
// what torch.onnx exports by default for the networks nicc reads.
const ExportOpset = 13

// Encode writes a dense network (Gemm layers; ReLU, tanh, sigmoid, leaky ReLU or no
// activation), or one with an LSTM between its dense layers, as an ONNX model: an input "x"
// whose doc_string lists the input names (so Parse gives them back) and an output "y". An LSTM
// is written as torch.onnx exports one: x of [1, inputs], the LSTM's initial state as inputs
// lstm_h0 and lstm_c0 and its final state as outputs lstm_hn and lstm_cn ([1, 1, hidden] each), the chain
// unsqueezed into the LSTM and squeezed out of it. Weights are stored as float32, as torch
// exports them: a model whose weights are not float32 values is refused, so the file holds
// exactly the network given. The model's RL-CC parameters (model.Model.RLCC) are written as
// metadata_props named RLCCPrefix + key, which Parse reads back.
func Encode(m *model.Model) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	g := pbGraph{name: m.Name}
	doc := strings.Join(m.Inputs, ",")
	if strings.Count(doc, ",") != len(m.Inputs)-1 {
		doc = "" // a name holds a comma: the list would not read back
	}
	batch := int64(-1)
	if m.NewState() != nil {
		batch = 1 // the LSTM's state is one flow's
	}
	g.inputs = []pbValue{{name: "x", dims: []int64{batch, int64(len(m.Inputs))}, doc: doc}}
	h := "x"
	for k, l := range m.Layers {
		var err error
		if l.Op == model.OpLSTM {
			h, err = lstmNodes(&g, l, k, h)
		} else {
			h, err = denseNodes(&g, l, k, h)
		}
		if err != nil {
			return nil, err
		}
	}
	// The last value is the output, renamed y by an Identity when it has another name.
	g.nodes = append(g.nodes, node("Identity", "output", []string{h}, "y"))
	g.outputs = append([]pbValue{{name: "y", dims: []int64{batch, int64(m.NumOutputs())}}}, g.outputs...)
	return pbModel{opset: ExportOpset, graph: g, producer: "nicc", doc: m.Doc, metadata: rlccProps(m.RLCC)}.encode(), nil
}

// denseNodes adds layer k, dense, on value h: its Gemm and activation; it returns the output.
func denseNodes(g *pbGraph, l model.Layer, k int, h string) (string, error) {
	w, err := float32s(fmt.Sprintf("layer %d weights", k), l.W...)
	if err != nil {
		return "", err
	}
	in := []string{h, fmt.Sprintf("W%d", k)}
	g.inits = append(g.inits, pbTensor{name: in[1], dims: []int64{int64(l.Out), int64(l.In)}, dtype: dtFloat, f: w})
	if l.B != nil {
		b, err := float32s(fmt.Sprintf("layer %d bias", k), l.B)
		if err != nil {
			return "", err
		}
		in = append(in, fmt.Sprintf("B%d", k))
		g.inits = append(g.inits, pbTensor{name: in[2], dims: []int64{int64(l.Out)}, dtype: dtFloat, f: b})
	}
	z := fmt.Sprintf("z%d", k)
	g.nodes = append(g.nodes, node("Gemm", fmt.Sprintf("gemm%d", k), in, z, pbAttr{name: "transB", typ: atInt, i: 1}))
	act, err := activationNode(l, k, z)
	if err != nil || act == nil {
		return z, err
	}
	g.nodes = append(g.nodes, *act)
	return act.out[0], nil
}

// lstmNodes adds layer k, the LSTM, on value h ([1, in]): Unsqueeze to [1, 1, in], the LSTM
// with the graph's initial state, Squeeze and Gather of its Y back to [1, hidden], which it returns.
// The gate blocks go from the IR's order (i, f, g, o) to ONNX's (i, o, f, c).
func lstmNodes(g *pbGraph, l model.Layer, k int, h string) (string, error) {
	hid := int64(l.Out)
	perm := func(rows [][]float64) [][]float64 {
		out := make([][]float64, len(rows))
		for q := range 4 {
			copy(out[lstmGate[q]*l.Out:], rows[q*l.Out:(q+1)*l.Out])
		}
		return out
	}
	w, err := float32s(fmt.Sprintf("layer %d weights", k), perm(l.W)...)
	if err != nil {
		return "", err
	}
	r, err := float32s(fmt.Sprintf("layer %d recurrent weights", k), perm(l.R)...)
	if err != nil {
		return "", err
	}
	col := func(v []float64) [][]float64 {
		rows := make([][]float64, len(v))
		for i, x := range v {
			rows[i] = []float64{x}
		}
		return perm(rows)
	}
	bias := make([][]float64, 0, 8*l.Out)
	for _, v := range [][]float64{l.B, l.RB} {
		if v == nil {
			v = make([]float64, 4*l.Out)
		}
		bias = append(bias, col(v)...)
	}
	b, err := float32s(fmt.Sprintf("layer %d bias", k), bias...)
	if err != nil {
		return "", err
	}
	name := func(s string) string { return fmt.Sprintf("%s%d", s, k) }
	g.inits = append(g.inits,
		pbTensor{name: name("W"), dims: []int64{1, 4 * hid, int64(l.In)}, dtype: dtFloat, f: w},
		pbTensor{name: name("R"), dims: []int64{1, 4 * hid, hid}, dtype: dtFloat, f: r},
		pbTensor{name: name("B"), dims: []int64{1, 8 * hid}, dtype: dtFloat, f: b})
	state := []int64{1, 1, hid}
	g.inputs = append(g.inputs, pbValue{name: "lstm_h0", dims: state}, pbValue{name: "lstm_c0", dims: state})
	g.outputs = append(g.outputs, pbValue{name: "lstm_hn", dims: state}, pbValue{name: "lstm_cn", dims: state})
	constant := func(out string, dims []int64, v int64) pbNode {
		t := pbTensor{dims: dims, dtype: dtInt64, i: []int64{v}}
		return pbNode{op: "Constant", name: out, out: []string{out}, attrs: []pbAttr{{name: "value", typ: atTensor, t: &t}}}
	}
	g.nodes = append(g.nodes,
		constant(name("unsqueeze_axes"), []int64{1}, 0),
		node("Unsqueeze", name("unsqueeze"), []string{h, name("unsqueeze_axes")}, name("x_seq")),
		pbNode{op: "LSTM", name: name("lstm"), in: []string{name("x_seq"), name("W"), name("R"), name("B"), "", "lstm_h0", "lstm_c0"},
			out: []string{name("y_seq"), "lstm_hn", "lstm_cn"}, attrs: []pbAttr{{name: "hidden_size", typ: atInt, i: hid}}},
		constant(name("squeeze_axes"), []int64{1}, 1),
		node("Squeeze", name("squeeze"), []string{name("y_seq"), name("squeeze_axes")}, name("y_dir")),
		constant(name("gather_index"), nil, 0),
		pbNode{op: "Gather", name: name("gather"), in: []string{name("y_dir"), name("gather_index")}, out: []string{name("h")},
			attrs: []pbAttr{{name: "axis", typ: atInt, i: 0}}})
	return name("h"), nil
}

func node(op, name string, in []string, out string, attrs ...pbAttr) pbNode {
	return pbNode{op: op, name: name, in: in, out: []string{out}, attrs: attrs}
}

func activationNode(l model.Layer, k int, z string) (*pbNode, error) {
	out := fmt.Sprintf("h%d", k)
	var n pbNode
	switch l.Act {
	case model.ActIdentity:
		return nil, nil
	case model.ActReLU:
		n = node("Relu", fmt.Sprintf("relu%d", k), []string{z}, out)
	case model.ActTanh:
		n = node("Tanh", fmt.Sprintf("tanh%d", k), []string{z}, out)
	case model.ActSigmoid:
		n = node("Sigmoid", fmt.Sprintf("sigmoid%d", k), []string{z}, out)
	case model.ActLeakyReLU:
		a, err := float32s(fmt.Sprintf("layer %d leaky_relu slope", k), []float64{l.Alpha})
		if err != nil {
			return nil, err
		}
		n = node("LeakyRelu", fmt.Sprintf("leaky_relu%d", k), []string{z}, out, pbAttr{name: "alpha", typ: atFloat, f: a[0]})
	default:
		return nil, fmt.Errorf("onnx export: layer %d's activation %s is not written", k, l.Act)
	}
	return &n, nil
}

// float32s flattens rows into float32 values, refusing any that float32 does not hold exactly.
func float32s(what string, rows ...[]float64) ([]float32, error) {
	var out []float32
	for _, r := range rows {
		for _, v := range r {
			f := float32(v)
			if float64(f) != v { // also an overflow to ±Inf
				return nil, fmt.Errorf("onnx export: %s: %v is not a float32 value (round the weights to float32 first)", what, v)
			}
			out = append(out, f)
		}
	}
	return out, nil
}
