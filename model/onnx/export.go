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
// activation) as an ONNX model: one input "x" of [batch, inputs] whose doc_string lists the
// input names (so Parse gives them back), one output "y". Weights are stored as float32, as
// torch exports them: a model whose weights are not float32 values is refused, so the file
// holds exactly the network given.
func Encode(m *model.Model) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	g := pbGraph{name: m.Name}
	doc := strings.Join(m.Inputs, ",")
	if strings.Count(doc, ",") != len(m.Inputs)-1 {
		doc = "" // a name holds a comma: the list would not read back
	}
	g.inputs = []pbValue{{name: "x", dims: []int64{-1, int64(len(m.Inputs))}, doc: doc}}
	h := "x"
	for k, l := range m.Layers {
		if l.Op != model.OpDense {
			return nil, fmt.Errorf("onnx export: layer %d is %s: only dense networks are written", k, l.Op)
		}
		w, err := float32s(fmt.Sprintf("layer %d weights", k), l.W...)
		if err != nil {
			return nil, err
		}
		in := []string{h, fmt.Sprintf("W%d", k)}
		g.inits = append(g.inits, pbTensor{name: in[1], dims: []int64{int64(l.Out), int64(l.In)}, dtype: dtFloat, f: w})
		if l.B != nil {
			b, err := float32s(fmt.Sprintf("layer %d bias", k), l.B)
			if err != nil {
				return nil, err
			}
			in = append(in, fmt.Sprintf("B%d", k))
			g.inits = append(g.inits, pbTensor{name: in[2], dims: []int64{int64(l.Out)}, dtype: dtFloat, f: b})
		}
		z := fmt.Sprintf("z%d", k)
		g.nodes = append(g.nodes, node("Gemm", fmt.Sprintf("gemm%d", k), in, z, pbAttr{name: "transB", typ: atInt, i: 1}))
		act, err := activationNode(l, k, z)
		if err != nil {
			return nil, err
		}
		h = z
		if act != nil {
			g.nodes = append(g.nodes, *act)
			h = act.out[0]
		}
	}
	// The last value is the output, renamed y by an Identity when it has another name.
	g.nodes = append(g.nodes, node("Identity", "output", []string{h}, "y"))
	g.outputs = []pbValue{{name: "y", dims: []int64{-1, int64(m.NumOutputs())}}}
	return pbModel{opset: ExportOpset, graph: g, producer: "nicc", doc: m.Doc}.encode(), nil
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
