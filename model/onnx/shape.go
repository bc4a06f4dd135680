package onnx

// Ops that only reshape the batch-1 vector: they change nothing in the IR.

import "slices"

func (b *builder) identity(n *nodeProto) error {
	if _, err := attrsOf(n); err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	if t, ok := b.consts[n.inputs[0]]; ok { // a constant under a second name
		b.consts[n.outputs[0]] = t
		return nil
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	return b.advance(n, dims)
}

func (b *builder) flatten(n *nodeProto) error {
	at, err := attrsOf(n, "axis")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	axis, err := at.int("axis", 1)
	if err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	r := int64(len(dims))
	if axis < -r || axis > r {
		return errAt(n, "axis %d is out of range for shape %v", axis, dims)
	}
	if axis < 0 {
		axis += r
	}
	return b.advance(n, []int64{numel(dims[:axis]), numel(dims[axis:])})
}

func (b *builder) reshape(n *nodeProto) error {
	at, err := attrsOf(n, "allowzero")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	allowZero, err := at.flag("allowzero")
	if err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	st, err := b.needConst(n, 1, "shape")
	if err != nil {
		return err
	}
	shape, err := st.ints(maxRank)
	if err != nil {
		return inNode(n, err)
	}
	od := make([]int64, len(shape))
	infer := -1
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
			od[i] = 1
		case s == 0 && !allowZero:
			if i >= len(dims) {
				return errAt(n, "shape %v copies dimension %d, which the input of shape %v lacks", shape, i, dims)
			}
			od[i] = dims[i]
		case s < 0:
			return errAt(n, "shape %v is not a valid target shape", shape)
		default:
			od[i] = s
		}
	}
	if infer >= 0 {
		p := numel(od)
		if p == 0 || int64(b.width)%p != 0 {
			return errAt(n, "shape %v does not fit the %d-element vector", shape, b.width)
		}
		od[infer] = int64(b.width) / p
	}
	return b.advance(n, od)
}

// squeeze handles Squeeze and Unsqueeze. Their axes are an attribute before opset 13 and an
// input from opset 13 on.
func (b *builder) squeeze(n *nodeProto) error {
	var known []string
	if b.opset < 13 {
		known = []string{"axes"}
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
	var axes []int64
	hasAxes := false
	if b.opset < 13 {
		if len(n.inputs) != 1 {
			return errAt(n, "has %d inputs; before opset 13 the axes are an attribute", len(n.inputs))
		}
		a, err := at.get("axes", atInts)
		if err != nil {
			return err
		}
		if a != nil {
			if len(a.ints) > maxRank {
				return errAt(n, "has %d axes, over %d", len(a.ints), maxRank)
			}
			axes, hasAxes = a.ints, true
		}
	} else {
		if len(n.inputs) > 2 {
			return errAt(n, "has %d inputs, want at most 2", len(n.inputs))
		}
		t, err := b.constIn(n, 1, "axes")
		if err != nil {
			return err
		}
		if t != nil {
			if axes, err = t.ints(maxRank); err != nil {
				return inNode(n, err)
			}
			hasAxes = true
		}
	}
	if n.op == "Unsqueeze" {
		if !hasAxes {
			return errAt(n, "has no axes")
		}
		r := int64(len(dims) + len(axes))
		ins := make([]bool, r)
		for _, a := range axes {
			if a < -r || a >= r {
				return errAt(n, "axis %d is out of range for an output of rank %d", a, r)
			}
			if a < 0 {
				a += r
			}
			if ins[a] {
				return errAt(n, "axis %d is given twice", a)
			}
			ins[a] = true
		}
		od := make([]int64, 0, r)
		j := 0
		for i := range ins {
			if ins[i] {
				od = append(od, 1)
			} else {
				od = append(od, dims[j])
				j++
			}
		}
		return b.advance(n, od)
	}
	r := int64(len(dims))
	drop := make([]bool, r)
	if !hasAxes {
		for i, d := range dims {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		if a < -r || a >= r {
			return errAt(n, "axis %d is out of range for shape %v", a, dims)
		}
		if a < 0 {
			a += r
		}
		if drop[a] {
			return errAt(n, "axis %d is given twice", a)
		}
		if dims[a] != 1 {
			return errAt(n, "axis %d of shape %v is not 1", a, dims)
		}
		drop[a] = true
	}
	var od []int64
	for i, d := range dims {
		if !drop[i] {
			od = append(od, d)
		}
	}
	return b.advance(n, od)
}

// gather accepts only the pick of index 0 (or -1) along an axis of size 1, as torch writes for
// out[0] on an LSTM's output: the vector itself, reshaped.
func (b *builder) gather(n *nodeProto) error {
	at, err := attrsOf(n, "axis")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	axis, err := at.int("axis", 0)
	if err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	t, err := b.needConst(n, 1, "indices")
	if err != nil {
		return err
	}
	idx, err := t.ints(1)
	if err != nil {
		return inNode(n, err)
	}
	r := int64(len(dims))
	if axis < -r || axis >= r {
		return errAt(n, "axis %d is out of range for shape %v", axis, dims)
	}
	if axis < 0 {
		axis += r
	}
	if dims[axis] != 1 || len(idx) != 1 || (idx[0] != 0 && idx[0] != -1) {
		return errAt(n, "selects part of the vector (indices %v on axis %d of shape %v); nicc supports Gather only as index 0 of a size-1 axis", idx, axis, dims)
	}
	od := slices.Concat(dims[:axis], t.dims, dims[axis+1:])
	return b.advance(n, od)
}

// batchSeqSwap is the one permutation Transpose may apply: batch and sequence axes of a
// [batch seq feature] tensor swapped, as torch writes around nn.LSTM(batch_first=True).
var batchSeqSwap = []int64{1, 0, 2}

// transpose accepts only batchSeqSwap on a tensor whose last axis holds the whole vector. Both
// swapped axes are then 1, so the vector is unchanged. Any other permutation would move the
// feature axis, which nicc's chain of batch-1 vectors cannot express.
func (b *builder) transpose(n *nodeProto) error {
	at, err := attrsOf(n, "perm")
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
	if len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	a, err := at.get("perm", atInts)
	if err != nil {
		return err
	}
	perm, what := []int64{}, "perm"
	if a != nil {
		perm = a.ints
	} else {
		for i := len(dims) - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
		what = "no perm (all axes reversed), so perm"
	}
	if len(perm) > maxRank {
		return errAt(n, "perm has %d axes, over %d", len(perm), maxRank)
	}
	if !slices.Equal(perm, batchSeqSwap) || len(dims) != 3 || dims[2] != int64(b.width) {
		return errAt(n, "%s %v on shape %v is not supported: nicc accepts a Transpose only as the swap of the batch and sequence axes of a [batch seq feature] tensor (perm %v), as torch writes around nn.LSTM(batch_first=True)", what, perm, dims, batchSeqSwap)
	}
	return b.advance(n, []int64{dims[1], dims[0], dims[2]})
}
