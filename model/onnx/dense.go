package onnx

// Dense layers: Gemm, MatMul, the Add folded into their bias, and the activation after them.

import (
	"math"
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// weights reads a constant weight tensor, naming the node on any fault.
func (b *builder) weights(n *nodeProto, t *tensorProto) ([]float64, error) {
	if b.params += t.numel; b.params > MaxParams {
		return nil, errAt(n, "the model reads over %d weights (%s %q has shape %v)", MaxParams, t.kind(), t.name, t.dims)
	}
	v, err := t.floats()
	if err != nil {
		return nil, inNode(n, err)
	}
	return v, nil
}

// startDense appends a dense layer of the given weights and bias.
func (b *builder) startDense(n *nodeProto, w [][]float64, bias []float64) error {
	for r, row := range w {
		for c, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errAt(n, "weight [%d][%d] is %v after scaling by alpha", r, c, v)
			}
		}
	}
	for i, v := range bias {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errAt(n, "bias [%d] is %v after scaling by beta", i, v)
		}
	}
	b.layers = append(b.layers, model.Layer{Op: model.OpDense, In: b.width, Out: len(w), W: w, B: bias})
	b.open = true
	return nil
}

func (b *builder) gemm(n *nodeProto) error {
	at, err := attrsOf(n, "alpha", "beta", "transA", "transB")
	if err != nil {
		return err
	}
	alpha, err := at.float("alpha", 1)
	if err != nil {
		return err
	}
	beta, err := at.float("beta", 1)
	if err != nil {
		return err
	}
	transA, err := at.flag("transA")
	if err != nil {
		return err
	}
	transB, err := at.flag("transB")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(dims) != 2 || dims[0] != 1 && !transA || dims[1] != 1 && transA {
		return errAt(n, "input A has shape %v (transA=%d); nicc needs one row, a batch-1 vector", dims, b2i(transA))
	}
	k := int64(b.width)
	bt, err := b.needConst(n, 1, "weight B")
	if err != nil {
		return err
	}
	if len(bt.dims) != 2 {
		return errAt(n, "weight B %q has shape %v, want a matrix", bt.name, bt.dims)
	}
	rows, cols := bt.dims[0], bt.dims[1] // B is K×N, or N×K with transB
	out := cols
	if transB {
		out = rows
	}
	if transB && cols != k || !transB && rows != k {
		return errAt(n, "weight B %q has shape %v (transB=%d), which does not fit an input of width %d", bt.name, bt.dims, b2i(transB), k)
	}
	if out < 1 || out > model.MaxWidth {
		return errAt(n, "weight B %q has shape %v: %d outputs, want 1..%d", bt.name, bt.dims, out, model.MaxWidth)
	}
	flat, err := b.weights(n, bt)
	if err != nil {
		return err
	}
	w := make([][]float64, out)
	for o := range w {
		w[o] = make([]float64, k)
		for i := range w[o] {
			if transB {
				w[o][i] = alpha * flat[int64(o)*k+int64(i)]
			} else {
				w[o][i] = alpha * flat[int64(i)*out+int64(o)]
			}
		}
	}
	var bias []float64
	ct, err := b.constIn(n, 2, "bias C")
	if err != nil {
		return err
	}
	if ct != nil {
		if bias, err = b.broadcast(n, ct, []int64{1, out}); err != nil {
			return err
		}
		for i := range bias {
			bias[i] *= beta
		}
	}
	if err := b.startDense(n, w, bias); err != nil {
		return err
	}
	b.width = int(out)
	return b.advance(n, []int64{1, out})
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func (b *builder) matmul(n *nodeProto) error {
	if _, err := attrsOf(n); err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	if _, ok := b.live[n.inputs[1]]; ok {
		return errAt(n, "the chain's value %q is the right-hand operand; nicc needs x·W with a constant W", n.inputs[1])
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	for i := 0; i < len(dims)-1; i++ {
		if dims[i] != 1 {
			return errAt(n, "input A has shape %v; nicc needs a batch-1 vector (all dimensions but the last 1)", dims)
		}
	}
	k := int64(b.width)
	bt, err := b.needConst(n, 1, "weight B")
	if err != nil {
		return err
	}
	if len(bt.dims) != 2 {
		return errAt(n, "weight B %q has shape %v, want a matrix", bt.name, bt.dims)
	}
	if bt.dims[0] != k {
		return errAt(n, "weight B %q has shape %v, which does not fit an input of width %d", bt.name, bt.dims, k)
	}
	out := bt.dims[1]
	if out < 1 || out > model.MaxWidth {
		return errAt(n, "weight B %q has shape %v: %d outputs, want 1..%d", bt.name, bt.dims, out, model.MaxWidth)
	}
	flat, err := b.weights(n, bt)
	if err != nil {
		return err
	}
	w := make([][]float64, out)
	for o := range w {
		w[o] = make([]float64, k)
		for i := range w[o] {
			w[o][i] = flat[int64(i)*out+int64(o)]
		}
	}
	if err := b.startDense(n, w, nil); err != nil {
		return err
	}
	b.width = int(out)
	od := slices.Clone(dims)
	od[len(od)-1] = out
	return b.advance(n, od)
}

// add folds the addition of a constant into the bias of the dense layer just before it.
func (b *builder) add(n *nodeProto) error {
	if _, err := attrsOf(n); err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	ci := 0
	if _, ok := b.live[n.inputs[1]]; ok {
		ci = 1
	}
	dims, err := b.chainIn(n, ci)
	if err != nil {
		return err
	}
	ct, err := b.needConst(n, 1-ci, "addend")
	if err != nil {
		return err
	}
	if !b.open {
		return errAt(n, "adds a constant that does not follow a Gemm or MatMul; nicc folds Add into a dense layer's bias")
	}
	// Bidirectional broadcast: the result must still be the same vector, not a bigger tensor.
	rank := max(len(dims), len(ct.dims))
	if rank > maxRank {
		return errAt(n, "addend %q has %d dimensions, over %d", ct.name, len(ct.dims), maxRank)
	}
	od := make([]int64, rank)
	for i := range od {
		a, c := dimAt(dims, i, rank), dimAt(ct.dims, i, rank)
		switch {
		case a == c || c == 1:
			od[i] = a
		case a == 1:
			od[i] = c
		default:
			return errAt(n, "addend %q of shape %v does not broadcast against the vector of shape %v", ct.name, ct.dims, dims)
		}
	}
	if numel(od) != int64(b.width) {
		return errAt(n, "adding %q of shape %v would spread the vector of shape %v into shape %v", ct.name, ct.dims, dims, od)
	}
	add, err := b.broadcast(n, ct, od)
	if err != nil {
		return err
	}
	l := &b.layers[len(b.layers)-1]
	if l.B == nil {
		l.B = make([]float64, l.Out)
	}
	for i, v := range add {
		l.B[i] += v
		if math.IsInf(l.B[i], 0) {
			return errAt(n, "bias [%d] overflows", i)
		}
	}
	return b.advance(n, od)
}

// dimAt is dimension i of dims right-aligned to rank, 1 where dims is shorter.
func dimAt(dims []int64, i, rank int) int64 {
	j := i - (rank - len(dims))
	if j < 0 {
		return 1
	}
	return dims[j]
}

// broadcast expands constant t to shape to (unidirectional numpy broadcasting) and returns
// it flattened in row-major order.
func (b *builder) broadcast(n *nodeProto, t *tensorProto, to []int64) ([]float64, error) {
	if len(t.dims) > len(to) {
		return nil, errAt(n, "%s %q has shape %v, which does not broadcast to %v", t.kind(), t.name, t.dims, to)
	}
	for i := range to {
		if d := dimAt(t.dims, i, len(to)); d != 1 && d != to[i] {
			return nil, errAt(n, "%s %q has shape %v, which does not broadcast to %v", t.kind(), t.name, t.dims, to)
		}
	}
	src, err := b.weights(n, t)
	if err != nil {
		return nil, err
	}
	total := numel(to)
	out := make([]float64, total)
	idx := make([]int64, len(to))
	for k := range out {
		// Row-major index of k in to, then the source offset with broadcast axes pinned to 0.
		rem := int64(k)
		for i := len(to) - 1; i >= 0; i-- {
			idx[i] = rem % to[i]
			rem /= to[i]
		}
		off, stride := int64(0), int64(1)
		for i := len(to) - 1; i >= 0; i-- {
			d := dimAt(t.dims, i, len(to))
			if d != 1 {
				off += idx[i] * stride
			}
			stride *= d
		}
		out[k] = src[off]
	}
	return out, nil
}

func (b *builder) activation(n *nodeProto, act model.Activation) error {
	var known []string
	if act == model.ActLeakyReLU {
		known = []string{"alpha"}
	}
	at, err := attrsOf(n, known...)
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if !b.open {
		return errAt(n, "activation does not follow a dense layer; nicc folds each activation into the Gemm or MatMul (+Add) just before it")
	}
	l := &b.layers[len(b.layers)-1]
	switch act {
	case model.ActLeakyReLU:
		if l.Alpha, err = at.float("alpha", 0.01); err != nil {
			return err
		}
	case model.ActClip:
		if l.Lo, l.Hi, err = b.clipBounds(n); err != nil {
			return err
		}
	}
	if act != model.ActClip && len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	l.Act = act
	b.open = false
	return b.advance(n, dims)
}

// clipBounds reads Clip's min and max inputs; a missing or infinite bound becomes
// ∓math.MaxFloat64, and min > max becomes [max, max], both exact for finite inputs.
func (b *builder) clipBounds(n *nodeProto) (lo, hi float64, err error) {
	if len(n.inputs) > 3 {
		return 0, 0, errAt(n, "has %d inputs, want at most 3", len(n.inputs))
	}
	bound := func(i int, what string, def float64) (float64, error) {
		t, err := b.constIn(n, i, what)
		if t == nil || err != nil {
			return def, err
		}
		if t.numel != 1 {
			return 0, errAt(n, "%s %q has shape %v, want a scalar", what, t.name, t.dims)
		}
		v, err := t.values()
		if err != nil {
			return 0, inNode(n, err)
		}
		if math.IsNaN(v[0]) {
			return 0, errAt(n, "%s %q is NaN", what, t.name)
		}
		if math.IsInf(v[0], 0) {
			return math.Copysign(math.MaxFloat64, v[0]), nil
		}
		return v[0], nil
	}
	if lo, err = bound(1, "min", -math.MaxFloat64); err != nil {
		return
	}
	if hi, err = bound(2, "max", math.MaxFloat64); err != nil {
		return
	}
	lo = min(lo, hi)
	return lo, hi, nil
}
