package model

import (
	"fmt"
	"math"
)

// Limits on what a model may declare, checked before anything is sized from it.
const (
	MaxInputs = 1 << 12
	MaxWidth  = 1 << 12
	MaxNodes  = 1 << 22
)

// Validate checks shapes, finiteness and tree structure. Every model a frontend returns has passed it.
func (m *Model) Validate() error {
	n := len(m.Inputs)
	if n == 0 || n > MaxInputs {
		return Errorf("model declares %d inputs, want 1..%d", n, MaxInputs)
	}
	if err := validateRLCC(m.RLCC); err != nil {
		return err
	}
	switch {
	case m.Ensemble != nil && len(m.Layers) > 0:
		return Errorf("model has both layers and a tree ensemble")
	case m.Ensemble != nil:
		return m.Ensemble.validate(n)
	case len(m.Layers) == 0:
		return Errorf("model has neither layers nor a tree ensemble")
	}
	in, lstms := n, 0
	for i := range m.Layers {
		l := &m.Layers[i]
		if l.Op == OpLSTM {
			lstms++
		}
		if err := l.validate(in); err != nil {
			return Errorf("layer %d (%s): %v", i, l.Op, err)
		}
		in = l.Out
	}
	if lstms > 1 {
		return Errorf("model has %d LSTM layers; one is supported", lstms)
	}
	return nil
}

func (l *Layer) validate(in int) error {
	if l.Op < 0 || l.Op >= opEnd {
		return fmt.Errorf("unknown op %d", int(l.Op))
	}
	if l.In != in {
		return fmt.Errorf("in is %d, but the previous stage gives %d", l.In, in)
	}
	if l.Out < 1 || l.Out > MaxWidth {
		return fmt.Errorf("out is %d, want 1..%d", l.Out, MaxWidth)
	}
	rows := l.Out
	if l.Op == OpLSTM {
		rows = 4 * l.Out
		if l.Act != ActIdentity {
			return fmt.Errorf("an LSTM takes no activation, got %s", l.Act)
		}
		if err := checkMatrix("r", l.R, rows, l.Out); err != nil {
			return err
		}
		if err := checkVector("rb", l.RB, rows); err != nil {
			return err
		}
	} else if l.R != nil || l.RB != nil {
		return fmt.Errorf("a dense layer has no recurrent weights")
	}
	if err := checkMatrix("w", l.W, rows, l.In); err != nil {
		return err
	}
	if err := checkVector("b", l.B, rows); err != nil {
		return err
	}
	switch l.Act {
	case ActIdentity, ActReLU, ActTanh, ActSigmoid:
	case ActLeakyReLU:
		if !finite(l.Alpha) {
			return fmt.Errorf("leaky_relu alpha is %v", l.Alpha)
		}
	case ActClip:
		if math.IsNaN(l.Lo) || math.IsNaN(l.Hi) || l.Lo > l.Hi {
			return fmt.Errorf("clip bounds [%v, %v] are not an interval", l.Lo, l.Hi)
		}
	default:
		return fmt.Errorf("unknown activation %d", int(l.Act))
	}
	return nil
}

func checkMatrix(name string, w [][]float64, rows, cols int) error {
	if len(w) != rows {
		return fmt.Errorf("%s has %d rows, want %d", name, len(w), rows)
	}
	for r, row := range w {
		if len(row) != cols {
			return fmt.Errorf("%s row %d has %d columns, want %d", name, r, len(row), cols)
		}
		for c, v := range row {
			if !finite(v) {
				return fmt.Errorf("%s[%d][%d] is %v", name, r, c, v)
			}
		}
	}
	return nil
}

// checkVector accepts an absent vector or one of length n with finite entries.
func checkVector(name string, v []float64, n int) error {
	if v == nil {
		return nil
	}
	if len(v) != n {
		return fmt.Errorf("%s has %d entries, want %d", name, len(v), n)
	}
	for i, x := range v {
		if !finite(x) {
			return fmt.Errorf("%s[%d] is %v", name, i, x)
		}
	}
	return nil
}

func (e *Ensemble) validate(numInputs int) error {
	if len(e.Trees) == 0 {
		return Errorf("ensemble has no trees")
	}
	if len(e.Trees) > MaxTrees {
		return Errorf("ensemble has %d trees, over %d", len(e.Trees), MaxTrees)
	}
	if !finite(e.Base) {
		return Errorf("ensemble base score is %v", e.Base)
	}
	if e.Transform < 0 || e.Transform >= transformEnd {
		return Errorf("unknown transform %d", int(e.Transform))
	}
	if !finite(e.SigmoidScale) || e.SigmoidScale < 0 {
		return Errorf("sigmoid scale is %v", e.SigmoidScale)
	}
	total := 0
	for t := range e.Trees {
		total += len(e.Trees[t].Nodes)
		if total > MaxNodes {
			return Errorf("ensemble has over %d nodes", MaxNodes)
		}
		if err := e.Trees[t].validate(numInputs); err != nil {
			return Errorf("tree %d: %v", t, err)
		}
	}
	return nil
}

// validate checks that every node is reached from the root exactly once, so the tree has no
// cycle, no shared child, no dangling child and no orphan.
func (t *Tree) validate(numInputs int) error {
	n := len(t.Nodes)
	if n == 0 {
		return fmt.Errorf("tree has no nodes")
	}
	seen := make([]bool, n)
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			return fmt.Errorf("node %d is reached twice (a cycle or a shared child)", i)
		}
		seen[i] = true
		nd := &t.Nodes[i]
		if nd.Leaf {
			if !finite(nd.Value) {
				return fmt.Errorf("node %d: leaf value is %v", i, nd.Value)
			}
			continue
		}
		switch {
		case nd.Feature < 0 || nd.Feature >= numInputs:
			return fmt.Errorf("node %d: feature %d is out of range [0, %d)", i, nd.Feature, numInputs)
		case !finite(nd.Threshold):
			return fmt.Errorf("node %d: threshold is %v", i, nd.Threshold)
		case nd.Cmp < 0 || nd.Cmp >= cmpEnd:
			return fmt.Errorf("node %d: unknown comparison %d", i, int(nd.Cmp))
		case nd.Missing < 0 || nd.Missing >= missingEnd:
			return fmt.Errorf("node %d: unknown missing type %d", i, int(nd.Missing))
		}
		for _, c := range [2]int{nd.Left, nd.Right} {
			if c <= 0 || c >= n {
				return fmt.Errorf("node %d: child %d is dangling (tree has nodes 0..%d, root 0)", i, c, n-1)
			}
			stack = append(stack, c)
		}
	}
	for i, s := range seen {
		if !s {
			return fmt.Errorf("node %d is unreachable from the root", i)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
