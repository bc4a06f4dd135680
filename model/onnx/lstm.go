package onnx

import (
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// lstmGate maps the IR's gate blocks (PyTorch order i, f, g, o) to ONNX's (i, o, f, c).
var lstmGate = [4]int{0, 2, 3, 1}

func (b *builder) lstmNode(n *nodeProto) error {
	at, err := lstmAttrs(n)
	if err != nil {
		return err
	}
	if b.lstm != nil {
		return errAt(n, "is a second LSTM; nicc supports one")
	}
	if len(n.inputs) > 8 {
		return errAt(n, "has %d inputs, want at most 8", len(n.inputs))
	}
	if len(n.outputs) > 3 {
		return errAt(n, "has %d outputs, want at most 3", len(n.outputs))
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	k := int64(b.width)
	if len(dims) != 3 || dims[0] != 1 || dims[1] != 1 {
		return errAt(n, "input X has shape %v, want [1 1 %d] (seq_len 1, batch 1)", dims, k)
	}
	wt, err := b.needConst(n, 1, "W")
	if err != nil {
		return err
	}
	rt, err := b.needConst(n, 2, "R")
	if err != nil {
		return err
	}
	if len(rt.dims) != 3 || rt.dims[0] != 1 || rt.dims[2] < 1 || rt.dims[2] > model.MaxWidth || rt.dims[1] != 4*rt.dims[2] {
		return errAt(n, "R %q has shape %v, want [1 4·hidden hidden] with hidden 1..%d", rt.name, rt.dims, model.MaxWidth)
	}
	h := rt.dims[2]
	if hs, err := at.int("hidden_size", h); err != nil {
		return err
	} else if hs != h {
		return errAt(n, "hidden_size is %d but R %q has shape %v", hs, rt.name, rt.dims)
	}
	if !slices.Equal(wt.dims, []int64{1, 4 * h, k}) {
		return errAt(n, "W %q has shape %v, want [1 %d %d] for hidden size %d and input width %d", wt.name, wt.dims, 4*h, k, h, k)
	}
	bt, err := b.constIn(n, 3, "B")
	if err != nil {
		return err
	}
	if bt != nil && !slices.Equal(bt.dims, []int64{1, 8 * h}) {
		return errAt(n, "B %q has shape %v, want [1 %d]", bt.name, bt.dims, 8*h)
	}
	if len(n.inputs) > 4 && n.inputs[4] != "" {
		st, err := b.constIn(n, 4, "sequence_lens")
		if err != nil {
			return err
		}
		lens, err := st.ints(1)
		if err != nil {
			return inNode(n, err)
		}
		if len(lens) != 1 || lens[0] != 1 {
			return errAt(n, "sequence_lens %v is not [1]", lens)
		}
	}
	if len(n.inputs) > 7 && n.inputs[7] != "" {
		return errAt(n, "peephole weights P are not supported")
	}
	if err := b.lstmState(n, h); err != nil {
		return err
	}
	for i, what := range [2]string{"Y_h", "Y_c"} {
		if len(n.outputs) <= 1+i || n.outputs[1+i] == "" {
			return errAt(n, "has no %s output; nicc carries the LSTM state from one decision to the next, so the ONNX model must return it", what)
		}
		b.stateOut[i] = n.outputs[1+i]
	}
	w, err := b.weights(n, wt)
	if err != nil {
		return err
	}
	r, err := b.weights(n, rt)
	if err != nil {
		return err
	}
	l := model.Layer{Op: model.OpLSTM, In: int(k), Out: int(h),
		W: gateRows(w, h, k), R: gateRows(r, h, h)}
	if bt != nil {
		bb, err := b.weights(n, bt)
		if err != nil {
			return err
		}
		// ONNX's B is Wb then Rb, 4·hidden each.
		l.B = slices.Concat(gateRows(bb[:4*h], h, 1)...)
		l.RB = slices.Concat(gateRows(bb[4*h:], h, 1)...)
	}
	b.open = false
	b.layers = append(b.layers, l)
	b.lstm = n
	b.width = int(h)
	// Y (the step's output, [seq dir batch hidden]) and Y_h ([dir batch hidden]) are the same
	// vector; the chain may continue from either.
	y := n.outputs[0]
	b.live = map[string][]int64{}
	if y != "" {
		b.live[y] = []int64{1, 1, 1, h}
	}
	b.live[b.stateOut[0]] = []int64{1, 1, h}
	return nil
}

// lstmAttrs checks an LSTM node's attributes: the forward, unclipped, default-activation,
// layout-0 cell nicc reads.
func lstmAttrs(n *nodeProto) (attrSet, error) {
	at, err := attrsOf(n, "hidden_size", "direction", "activations", "clip", "input_forget",
		"layout", "activation_alpha", "activation_beta")
	if err != nil {
		return at, err
	}
	for _, a := range []string{"clip", "activation_alpha", "activation_beta"} {
		if at.has(a) {
			return at, errAt(n, "attribute %s is not supported", a)
		}
	}
	if forget, err := at.int("input_forget", 0); err != nil || forget != 0 {
		if err == nil {
			err = errAt(n, "input_forget=%d is not supported", forget)
		}
		return at, err
	}
	if layout, err := at.int("layout", 0); err != nil || layout != 0 {
		if err == nil {
			err = errAt(n, "layout=%d is not supported; nicc reads layout 0 (seq, batch, feature)", layout)
		}
		return at, err
	}
	if a, err := at.get("direction", atString); err != nil {
		return at, err
	} else if a != nil && string(a.s) != "forward" {
		return at, errAt(n, "direction %q is not supported; nicc reads forward LSTMs", a.s)
	}
	if a, err := at.get("activations", atStrings); err != nil {
		return at, err
	} else if a != nil {
		want := []string{"Sigmoid", "Tanh", "Tanh"}
		got := make([]string, len(a.strings))
		for i, s := range a.strings {
			got[i] = string(s)
		}
		if !slices.Equal(got, want) {
			return at, errAt(n, "activations %q are not supported; nicc reads the default [Sigmoid Tanh Tanh]", got)
		}
	}
	return at, nil
}

// lstmState checks the LSTM's initial_h and initial_c: two distinct float graph inputs of
// their own, of shape [1 1 h].
func (b *builder) lstmState(n *nodeProto, h int64) error {
	var state [2]string
	for i, what := range [2]string{"initial_h", "initial_c"} {
		j := 5 + i
		if j >= len(n.inputs) || n.inputs[j] == "" {
			return errAt(n, "has no %s input; nicc carries the LSTM state from one decision to the next, so the ONNX model must take it as a graph input", what)
		}
		v, ok := b.graphIn[n.inputs[j]]
		if !ok || v == b.input {
			return errAt(n, "%s %q is not a graph input of its own", what, n.inputs[j])
		}
		if !v.tensor || v.elemType != dtFloat && v.elemType != dtDouble {
			return errAt(n, "%s %q is not a FLOAT or DOUBLE tensor", what, v.name)
		}
		if v.hasShape {
			if len(v.dims) != 3 || (v.dims[0].known && v.dims[0].value != 1) || (v.dims[1].known && v.dims[1].value != 1) || (v.dims[2].known && v.dims[2].value != h) {
				return errAt(n, "%s %q has a shape other than [1 1 %d]", what, v.name, h)
			}
		}
		state[i] = n.inputs[j]
	}
	if state[0] == state[1] {
		return errAt(n, "initial_h and initial_c are the same input %q", state[0])
	}
	return nil
}

// gateRows slices a flat [4·h × cols] ONNX gate matrix into rows, reordering the gate blocks
// from ONNX's i, o, f, c to the IR's i, f, g, o.
func gateRows(flat []float64, h, cols int64) [][]float64 {
	rows := make([][]float64, 0, 4*h)
	for _, g := range lstmGate {
		for j := int64(0); j < h; j++ {
			r := int64(g)*h + j
			rows = append(rows, slices.Clone(flat[r*cols:(r+1)*cols]))
		}
	}
	return rows
}
