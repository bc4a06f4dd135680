package model

import "math"

// State is one flow's recurrent state: the LSTM's hidden and cell vectors.
// Feed-forward models and ensembles have none.
type State struct {
	H, C []float64
}

// NewState returns a zero recurrent state, or nil when m has no LSTM.
func (m *Model) NewState() *State {
	for _, l := range m.Layers {
		if l.Op == OpLSTM {
			return &State{H: make([]float64, l.Out), C: make([]float64, l.Out)}
		}
	}
	return nil
}

// Eval computes the model's float64 output for input x, advancing st for a recurrent model
// (st may be nil for others). x must have NumInputs entries.
func (m *Model) Eval(st *State, x []float64) []float64 {
	if m.Ensemble != nil {
		return []float64{m.Ensemble.Eval(x)}
	}
	v := x
	for i := range m.Layers {
		l := &m.Layers[i]
		if l.Op == OpLSTM {
			v, _ = l.LSTMStep(st, v)
		} else {
			v = l.Dense(v)
		}
	}
	return v
}

// recurrent says m has an LSTM layer.
func (m *Model) recurrent() bool {
	for i := range m.Layers {
		if m.Layers[i].Op == OpLSTM {
			return true
		}
	}
	return false
}

// Scratch holds a dense network's layer outputs between calls of EvalInto4: one per
// goroutine.
type Scratch struct{ outs [][]float64 }

// EvalInto4 is Eval's first output for four inputs at once, each from a fresh state, with no
// allocation for a network of dense layers once s has served it: the four rows' sums are
// interleaved, which hides each one's latency, and each is added up in Dense's order, so the
// bits are Eval's. Other models are evaluated one input at a time.
func (m *Model) EvalInto4(s *Scratch, xs *[4][]float64) [4]float64 {
	if m.Ensemble != nil || m.recurrent() {
		var ys [4]float64
		for k, x := range xs {
			ys[k] = m.Eval(m.NewState(), x)[0]
		}
		return ys
	}
	if len(s.outs) == 0 {
		s.outs = make([][]float64, len(m.Layers))
		for i := range m.Layers {
			s.outs[i] = make([]float64, 4*m.Layers[i].Out)
		}
	}
	v := *xs
	for i := range m.Layers {
		l, y := &m.Layers[i], s.outs[i]
		y0, y1, y2, y3 := y[:l.Out], y[l.Out:2*l.Out], y[2*l.Out:3*l.Out], y[3*l.Out:]
		for o, row := range l.W {
			s0 := 0.0
			if l.B != nil {
				s0 = l.B[o]
			}
			s1, s2, s3 := s0, s0, s0
			x0, x1, x2, x3 := v[0][:len(row)], v[1][:len(row)], v[2][:len(row)], v[3][:len(row)]
			for i, w := range row {
				s0 += w * x0[i]
				s1 += w * x1[i]
				s2 += w * x2[i]
				s3 += w * x3[i]
			}
			y0[o], y1[o], y2[o], y3[o] = s0, s1, s2, s3
		}
		l.activateAll(y)
		v = [4][]float64{y0, y1, y2, y3}
	}
	return [4]float64{v[0][0], v[1][0], v[2][0], v[3][0]}
}

// Dense is a dense layer's output for x, its activation applied.
func (l *Layer) Dense(x []float64) []float64 { return l.denseInto(make([]float64, l.Out), x) }

// denseInto is Dense into y, of l.Out values.
func (l *Layer) denseInto(y, x []float64) []float64 {
	for o, row := range l.W {
		s := 0.0
		if l.B != nil {
			s = l.B[o]
		}
		for i, w := range row {
			s += w * x[i]
		}
		y[o] = s
	}
	l.activateAll(y[:len(l.W)])
	return y
}

// activateAll applies the activation to every value of ys: activate's results, with the
// switch taken once.
func (l *Layer) activateAll(ys []float64) {
	switch l.Act {
	case ActReLU:
		for i, s := range ys {
			ys[i] = math.Max(s, 0)
		}
	case ActTanh:
		for i, s := range ys {
			ys[i] = math.Tanh(s)
		}
	default:
		for i, s := range ys {
			ys[i] = l.activate(s)
		}
	}
}

func (l *Layer) activate(s float64) float64 {
	switch l.Act {
	case ActReLU:
		return math.Max(s, 0)
	case ActTanh:
		return math.Tanh(s)
	case ActSigmoid:
		return sigmoid(s)
	case ActLeakyReLU:
		if s < 0 {
			return l.Alpha * s
		}
		return s
	case ActClip:
		return math.Min(math.Max(s, l.Lo), l.Hi)
	}
	return s
}

// LSTMStep is PyTorch's LSTM cell, gates i, f, g, o: it advances st by one step on x,
// c' = f⊙c + i⊙g, h' = o⊙tanh(c'), and returns a copy of h' and the activated gates (4·Out:
// σ(i), σ(f), tanh(g), σ(o)).
func (l *Layer) LSTMStep(st *State, x []float64) (h, gates []float64) {
	n := l.Out
	gates = make([]float64, 4*n)
	for r := range gates {
		s := 0.0
		if l.B != nil {
			s += l.B[r]
		}
		if l.RB != nil {
			s += l.RB[r]
		}
		for i, w := range l.W[r] {
			s += w * x[i]
		}
		for j, w := range l.R[r] {
			s += w * st.H[j]
		}
		if r/n == 2 {
			gates[r] = math.Tanh(s)
		} else {
			gates[r] = sigmoid(s)
		}
	}
	for j := range n {
		i, f, g, o := gates[j], gates[n+j], gates[2*n+j], gates[3*n+j]
		st.C[j] = f*st.C[j] + i*g
		st.H[j] = o * math.Tanh(st.C[j])
	}
	return append([]float64(nil), st.H...), gates
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// sigmoid32 is XGBoost's float32 sigmoid, 1 / (expf(min(-x, 88.7)) + 1 + 1e-16), where the
// 1e-16 vanishes in float32; it rounds after the exp, the sum and the division.
func sigmoid32(x float32) float32 {
	e := float32(math.Exp(float64(min(-x, 88.7))))
	return 1 / (e + 1)
}

// zeroThreshold is LightGBM's kZeroThreshold, a float literal widened to double.
var zeroThreshold = float64(float32(1e-35))

// Eval is the ensemble's output for x. With Float32 set it follows XGBoost: features and
// thresholds compare as float32 and the score accumulates in float32, tree by tree. With
// Float32Splits set it follows CatBoost: float32 compares, a float64 sum.
func (e *Ensemble) Eval(x []float64) float64 {
	var score float64
	if e.Float32 {
		s := float32(e.Base)
		for t := range e.Trees {
			s += float32(e.Trees[t].Leaf(x, true).Value)
		}
		score = float64(s)
	} else {
		score = e.Base
		for t := range e.Trees {
			score += e.Trees[t].Leaf(x, e.Float32Splits).Value
		}
	}
	if e.Transform == TransformSigmoid {
		k := e.SigmoidScale
		if k == 0 {
			k = 1
		}
		if e.Float32 {
			return float64(sigmoid32(float32(k * score)))
		}
		return sigmoid(k * score)
	}
	return score
}

// SplitsFloat32 reports whether the ensemble's splits compare float32(x) with the threshold.
func (e *Ensemble) SplitsFloat32() bool { return e.Float32 || e.Float32Splits }

// Leaf walks the tree for x and returns the leaf it reaches.
func (t *Tree) Leaf(x []float64, f32 bool) *Node {
	n := &t.Nodes[0]
	for !n.Leaf {
		if n.GoesLeft(x[n.Feature], f32) {
			n = &t.Nodes[n.Left]
		} else {
			n = &t.Nodes[n.Right]
		}
	}
	return n
}

// GoesLeft is the split's decision for feature value v, missing values included.
func (n *Node) GoesLeft(v float64, f32 bool) bool {
	switch n.Missing {
	case MissingNaN:
		if math.IsNaN(v) {
			return n.DefaultLeft
		}
	case MissingZero:
		if math.IsNaN(v) || (v >= -zeroThreshold && v <= zeroThreshold) {
			return n.DefaultLeft
		}
	case MissingNone:
		if math.IsNaN(v) {
			v = 0
		}
	}
	if f32 {
		v = float64(float32(v))
	}
	switch n.Cmp {
	case CmpLT:
		return v < n.Threshold
	case CmpLE:
		return v <= n.Threshold
	default:
		return v > n.Threshold
	}
}
