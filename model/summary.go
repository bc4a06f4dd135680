package model

import (
	"fmt"
	"math"
	"strings"
)

// Summary is what `nicc inspect` reports about a model.
type Summary struct {
	Name    string   `json:"name,omitempty"`
	Doc     string   `json:"doc,omitempty"`
	Kind    Kind     `json:"kind"`
	Shape   string   `json:"shape"`
	Inputs  []string `json:"inputs"`
	Outputs int      `json:"outputs"`
	Params  int      `json:"params"`
	// StateFloats is the recurrent state carried between decisions (LSTM h and c).
	StateFloats int           `json:"state_floats"`
	Ops         OpCount       `json:"ops_per_decision"`
	Layers      []LayerInfo   `json:"layers,omitempty"`
	Trees       *TreeInfo     `json:"trees,omitempty"`
	Thresholds  []FeatureInfo `json:"thresholds,omitempty"`
}

// OpCount counts the float operations of one decision, worst path for trees.
type OpCount struct {
	MulAdd    int `json:"muladd"`    // multiply-accumulates
	Add       int `json:"add"`       // lone additions and multiplications
	Compare   int `json:"compare"`   // comparisons, ReLU, clamps
	Nonlinear int `json:"nonlinear"` // tanh, sigmoid
}

// FLOPs counts a multiply-accumulate as two operations and each other operation as one.
func (c OpCount) FLOPs() int { return 2*c.MulAdd + c.Add + c.Compare + c.Nonlinear }

// Range is the closed interval of a set of values.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

func emptyRange() Range { return Range{math.Inf(1), math.Inf(-1)} }

func (r *Range) add(v float64) { r.Min, r.Max = math.Min(r.Min, v), math.Max(r.Max, v) }

// LayerInfo describes one network layer.
type LayerInfo struct {
	Op      LayerOp    `json:"op"`
	In      int        `json:"in"`
	Out     int        `json:"out"`
	Act     Activation `json:"act"`
	Params  int        `json:"params"`
	HasBias bool       `json:"bias"`
	Weights Range      `json:"weights"`
}

// TreeInfo describes a tree ensemble.
type TreeInfo struct {
	Count     int       `json:"count"`
	MaxDepth  int       `json:"max_depth"`
	Nodes     int       `json:"nodes"`
	Leaves    int       `json:"leaves"`
	Base      float64   `json:"base"`
	Transform Transform `json:"transform"`
	LeafRange Range     `json:"leaf_values"`
}

// FeatureInfo is the split thresholds one feature is compared against.
type FeatureInfo struct {
	Feature string `json:"feature"`
	Splits  int    `json:"splits"`
	Range
}

// Summarize describes a valid model.
func (m *Model) Summarize() *Summary {
	s := &Summary{Name: m.Name, Doc: m.Doc, Kind: m.Kind(), Inputs: m.Inputs, Outputs: m.NumOutputs()}
	if m.Ensemble != nil {
		m.summarizeTrees(s)
		return s
	}
	widths := []string{fmt.Sprint(len(m.Inputs))}
	for _, l := range m.Layers {
		li := LayerInfo{Op: l.Op, In: l.In, Out: l.Out, Act: l.Act, HasBias: l.B != nil || l.RB != nil, Weights: emptyRange()}
		for _, mat := range [][][]float64{l.W, l.R} {
			for _, row := range mat {
				for _, w := range row {
					li.Weights.add(w)
				}
				li.Params += len(row)
			}
		}
		li.Params += len(l.B) + len(l.RB)
		s.Params += li.Params
		s.Layers = append(s.Layers, li)
		s.Ops.add(l.ops())
		w := fmt.Sprint(l.Out)
		if l.Op == OpLSTM {
			w = "LSTM " + w
			s.StateFloats += 2 * l.Out
		} else if l.Act != ActIdentity {
			w += " " + l.Act.String()
		}
		widths = append(widths, w)
	}
	s.Shape = strings.Join(widths, " → ")
	return s
}

func (c *OpCount) add(d OpCount) {
	c.MulAdd += d.MulAdd
	c.Add += d.Add
	c.Compare += d.Compare
	c.Nonlinear += d.Nonlinear
}

func (l *Layer) ops() OpCount {
	if l.Op == OpLSTM {
		h := l.Out
		c := OpCount{MulAdd: 4 * h * (l.In + h), Nonlinear: 5 * h, Add: h + 3*h}
		c.Add += len(l.B) + len(l.RB)
		return c
	}
	c := OpCount{MulAdd: l.Out * l.In, Add: len(l.B)}
	switch l.Act {
	case ActReLU:
		c.Compare += l.Out
	case ActClip:
		c.Compare += 2 * l.Out
	case ActLeakyReLU:
		c.Compare += l.Out
		c.Add += l.Out
	case ActTanh, ActSigmoid:
		c.Nonlinear += l.Out
	}
	return c
}

func (m *Model) summarizeTrees(s *Summary) {
	e := m.Ensemble
	ti := &TreeInfo{Count: len(e.Trees), Base: e.Base, Transform: e.Transform, LeafRange: emptyRange()}
	feats := make([]FeatureInfo, len(m.Inputs))
	for i := range feats {
		feats[i] = FeatureInfo{Feature: m.Inputs[i], Range: emptyRange()}
	}
	for t := range e.Trees {
		nodes := e.Trees[t].Nodes
		ti.Nodes += len(nodes)
		for _, n := range nodes {
			if n.Leaf {
				ti.Leaves++
				ti.LeafRange.add(n.Value)
				continue
			}
			feats[n.Feature].Splits++
			feats[n.Feature].add(n.Threshold)
		}
		d := e.Trees[t].Depth()
		ti.MaxDepth = max(ti.MaxDepth, d)
		s.Ops.Compare += d
	}
	s.Ops.Add = len(e.Trees)
	if e.Transform == TransformSigmoid {
		s.Ops.Nonlinear = 1
	}
	s.Params = ti.Nodes
	for _, f := range feats {
		if f.Splits > 0 {
			s.Thresholds = append(s.Thresholds, f)
		}
	}
	s.Trees = ti
	s.Shape = fmt.Sprintf("%d trees, depth ≤ %d, %d leaves", ti.Count, ti.MaxDepth, ti.Leaves)
}

// Depth is the number of splits on the tree's longest root-to-leaf path.
func (t *Tree) Depth() int {
	var depth func(i int) int
	depth = func(i int) int {
		n := &t.Nodes[i]
		if n.Leaf {
			return 0
		}
		return 1 + max(depth(n.Left), depth(n.Right))
	}
	return depth(0)
}
