package lightgbm

import (
	"math"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/model"
)

// rawTree is one Tree=N block as LightGBM holds it: splits 0..numLeaves-2 (the root is split 0),
// children >= 0 are splits and children < 0 are leaves ^child.
type rawTree struct {
	numLeaves    int
	splitFeature []int
	threshold    []float64
	decisionType []int
	left, right  []int
	leafValue    []float64
}

// tree reads the key=value lines of the block that starts at head ("Tree=N"). maxNodes caps
// the IR nodes the tree may need.
func (p *parser) tree(head line, numInputs, maxNodes int) (*rawTree, error) {
	idx, err := strconv.ParseUint(strings.TrimPrefix(head.text, "Tree="), 10, 31)
	if err != nil {
		return nil, p.errAt(head, "%s: the tree index is not a number", quote(head.text))
	}
	name := "Tree=" + strconv.FormatUint(idx, 10)
	kv := map[string]field{}
	for {
		l, ok := p.lines.peek()
		if !ok || l.text == "" || strings.HasPrefix(l.text, "Tree=") || l.text == "end of trees" {
			break
		}
		p.lines.next()
		k, v, ok := strings.Cut(l.text, "=")
		if !ok {
			return nil, p.errAt(l, "%s: want key=value, got %s", name, quote(l.text))
		}
		if !treeKeys[k] {
			continue
		}
		if _, dup := kv[k]; dup {
			return nil, p.errAt(l, "%s: %s appears twice", name, k)
		}
		kv[k] = field{l, v}
	}
	need := func(k string) (field, error) {
		f, ok := kv[k]
		if !ok {
			return f, p.errAt(head, "%s: the tree has no %s", name, k)
		}
		return f, nil
	}

	f, err := need("num_leaves")
	if err != nil {
		return nil, err
	}
	nl, err := p.atoi(f, f.val)
	if err != nil {
		return nil, err
	}
	// A tree of L leaves has 2L-1 IR nodes; cap before anything is sized from L.
	if nl < 1 || nl > (maxNodes+1)/2 {
		return nil, p.errAt(f.line, "%s: num_leaves is %d, want 1..%d", name, nl, (maxNodes+1)/2)
	}
	t := &rawTree{numLeaves: nl}

	if f, err = need("num_cat"); err != nil {
		return nil, err
	}
	nc, err := p.atoi(f, f.val)
	if err != nil {
		return nil, err
	}
	if nc != 0 {
		return nil, p.errAt(f.line, "%s: categorical splits are not supported (num_cat=%d)", name, nc)
	}
	if f, ok := kv["is_linear"]; ok {
		v, err := p.atoi(f, f.val)
		if err != nil {
			return nil, err
		}
		if v != 0 {
			return nil, p.errAt(f.line, "%s: linear trees (is_linear=%d) are not supported", name, v)
		}
	}

	if f, err = need("leaf_value"); err != nil {
		return nil, err
	}
	if t.leafValue, err = p.floats(name, f, nl); err != nil {
		return nil, err
	}
	if nl == 1 {
		// LightGBM reads nothing else of a one-leaf tree (the split arrays are empty).
		return t, nil
	}

	ns := nl - 1
	if f, err = need("split_feature"); err != nil {
		return nil, err
	}
	if t.splitFeature, err = p.ints(name, f, ns); err != nil {
		return nil, err
	}
	for i, v := range t.splitFeature {
		if v < 0 || v >= numInputs {
			return nil, p.errAt(f.line, "%s: split_feature[%d] is %d, want 0..%d (max_feature_idx)", name, i, v, numInputs-1)
		}
	}
	if f, err = need("threshold"); err != nil {
		return nil, err
	}
	if t.threshold, err = p.floats(name, f, ns); err != nil {
		return nil, err
	}
	if f, ok := kv["decision_type"]; ok {
		if t.decisionType, err = p.ints(name, f, ns); err != nil {
			return nil, err
		}
		for i, d := range t.decisionType {
			switch {
			case d < 0 || d&^decisionBits != 0:
				return nil, p.errAt(f.line, "%s: decision_type[%d] is %d, which sets bits LightGBM does not define", name, i, d)
			case d&catMask != 0:
				return nil, p.errAt(f.line, "%s: categorical splits are not supported (decision_type[%d]=%d)", name, i, d)
			case d>>missingShift&3 == 3:
				return nil, p.errAt(f.line, "%s: decision_type[%d]=%d has missing type 3, which LightGBM does not define", name, i, d)
			}
		}
	} else {
		// LightGBM's default when the field is absent: numerical, default right, missing None.
		t.decisionType = make([]int, ns)
	}
	if f, err = need("left_child"); err != nil {
		return nil, err
	}
	if t.left, err = p.children(name, f, ns, nl); err != nil {
		return nil, err
	}
	if f, err = need("right_child"); err != nil {
		return nil, err
	}
	if t.right, err = p.children(name, f, ns, nl); err != nil {
		return nil, err
	}
	if err := p.checkShape(head, name, t); err != nil {
		return nil, err
	}
	return t, nil
}

// checkShape walks the tree from split 0 and checks that every split and leaf is reached
// exactly once. Each node is pushed at most once, so a cyclic child graph cannot loop.
func (p *parser) checkShape(head line, name string, t *rawTree) error {
	ns := t.numLeaves - 1
	splitSeen := make([]bool, ns)
	leafSeen := make([]bool, t.numLeaves)
	splitSeen[0] = true
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range [2]int{t.left[i], t.right[i]} {
			if c < 0 {
				if leafSeen[^c] {
					return p.errAt(head, "%s: leaf %d is reached twice (a shared child)", name, ^c)
				}
				leafSeen[^c] = true
				continue
			}
			if splitSeen[c] {
				return p.errAt(head, "%s: split %d is reached twice (a cycle or a shared child)", name, c)
			}
			splitSeen[c] = true
			stack = append(stack, c)
		}
	}
	for i, s := range splitSeen {
		if !s {
			return p.errAt(head, "%s: split %d is unreachable from the root", name, i)
		}
	}
	for i, s := range leafSeen {
		if !s {
			return p.errAt(head, "%s: leaf %d is unreachable from the root", name, i)
		}
	}
	return nil
}

// floats reads exactly n finite numbers.
func (p *parser) floats(name string, f field, n int) ([]float64, error) {
	if err := p.count(name, f, n); err != nil {
		return nil, err
	}
	out := make([]float64, 0, n)
	for tok := range strings.FieldsSeq(f.val) {
		v, err := strconv.ParseFloat(tok, 64)
		switch {
		case math.IsInf(v, 0) || math.IsNaN(v):
			// NaN, Inf, or a literal beyond the float64 range.
			return nil, p.errAt(f.line, "%s: %s[%d] is %s, want a finite number", name, f.key(), len(out), quote(tok))
		case err != nil:
			return nil, p.errAt(f.line, "%s: %s[%d] = %s is not a number", name, f.key(), len(out), quote(tok))
		}
		out = append(out, v)
	}
	return out, nil
}

// ints reads exactly n 32-bit integers.
func (p *parser) ints(name string, f field, n int) ([]int, error) {
	if err := p.count(name, f, n); err != nil {
		return nil, err
	}
	out := make([]int, 0, n)
	for tok := range strings.FieldsSeq(f.val) {
		v, err := strconv.ParseInt(tok, 10, 32)
		if err != nil {
			return nil, p.errAt(f.line, "%s: %s[%d] = %s is not a 32-bit integer", name, f.key(), len(out), quote(tok))
		}
		out = append(out, int(v))
	}
	return out, nil
}

// children reads a left_child or right_child array: n entries, each a split 0..numLeaves-2 or
// a leaf -1..-numLeaves.
func (p *parser) children(name string, f field, n, numLeaves int) ([]int, error) {
	c, err := p.ints(name, f, n)
	if err != nil {
		return nil, err
	}
	for i, v := range c {
		if v >= numLeaves-1 || v < -numLeaves {
			return nil, p.errAt(f.line, "%s: %s[%d] is %d: no such node (splits 0..%d, leaves -1..-%d)",
				name, f.key(), i, v, numLeaves-2, numLeaves)
		}
	}
	return c, nil
}

func (p *parser) count(name string, f field, n int) error {
	if got := countFields(f.val); got != n {
		return p.errAt(f.line, "%s: %s has %d entries, want %d", name, f.key(), got, n)
	}
	return nil
}

// toIR converts a checked tree: IR node i is split i, IR node numLeaves-1+j is leaf j.
func (t *rawTree) toIR() model.Tree {
	ns := t.numLeaves - 1
	nodes := make([]model.Node, ns+t.numLeaves)
	ir := func(c int) int {
		if c < 0 {
			return ns + ^c
		}
		return c
	}
	for i := range ns {
		d := t.decisionType[i]
		miss := missingType(d)
		nodes[i] = model.Node{
			Feature:     t.splitFeature[i],
			Threshold:   effectiveThreshold(t.threshold[i], miss),
			Cmp:         model.CmpLE,
			Left:        ir(t.left[i]),
			Right:       ir(t.right[i]),
			DefaultLeft: d&defaultLeftMask != 0,
			Missing:     miss,
		}
	}
	for j, v := range t.leafValue {
		nodes[ns+j] = model.Node{Leaf: true, Value: v}
	}
	return model.Tree{Nodes: nodes}
}

func missingType(d int) model.Missing {
	switch d >> missingShift & 3 {
	case lgMissingZero:
		return model.MissingZero
	case lgMissingNaN:
		return model.MissingNaN
	}
	return model.MissingNone
}

// effectiveThreshold folds in what LightGBM's predictors do to an input before any tree sees
// it: every prediction entry point (C API dense and sparse rows, the CLI's text parser) keeps a
// feature only when |x| > kZeroThreshold or x is NaN, so x in [-kZeroThreshold, kZeroThreshold]
// reaches NumericalDecision as 0. The IR compares x itself. The two agree for every x as long as
// no threshold lies in [-kZeroThreshold, kZeroThreshold); LightGBM's own bin bounds never do, but
// a file may. Such a threshold t is replaced by one that splits every x the way LightGBM does:
//
//	t in [-kZeroThreshold, 0): the zero band goes right (0 <= t is false); x < -kZeroThreshold
//	    goes left. Equivalent: the largest double below -kZeroThreshold.
//	t in [0, kZeroThreshold): the zero band goes left; x > kZeroThreshold goes right.
//	    Equivalent: kZeroThreshold.
//
// With missing type Zero the band takes the default branch in both LightGBM and the IR, so the
// threshold is left alone.
func effectiveThreshold(t float64, miss model.Missing) float64 {
	if miss == model.MissingZero {
		return t
	}
	switch {
	case t >= -zeroThreshold && t < 0:
		return math.Nextafter(-zeroThreshold, math.Inf(-1))
	case t >= 0 && t < zeroThreshold:
		return zeroThreshold
	}
	return t
}
