package train

import (
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

// lstm is the RL-CC LSTM policy: x (the window) → W1·x + b1, ReLU → an LSTM cell of Hidden
// units (PyTorch's: gates i, f, g, o from Wx·h1 + Wh·h + b) → tanh(W3·h + b3). Its weights are
// views of one vector (flat); every flow keeps its own h and c, and each decision's values are
// kept for the backward pass through time.
type lstm struct {
	flat   []float64
	w1     [][]float64 // Hidden × inputs
	b1     []float64
	wx, wh [][]float64 // 4·Hidden × Hidden, rows i, f, g, o
	b      []float64   // 4·Hidden
	w3     []float64   // Hidden
	b3     []float64   // 1

	flows map[uint32]*lstmFlow
	order []lstmRef // the decisions in the order they were made
}

type lstmFlow struct {
	h, c  []float64
	steps []lstmStep
}

type lstmRef struct {
	flow uint32
	k    int // the step within the flow
}

// lstmStep is what one decision computed.
type lstmStep struct {
	x, a1, h1       []float64
	gates           []float64 // activated: σ(i), σ(f), tanh(g), σ(o)
	hPrev, cPrev, c []float64
	h               []float64
	y               float64
}

func lstmParams() int {
	in := len(rlcc.Names)
	return Hidden*in + Hidden + 2*4*Hidden*Hidden + 4*Hidden + Hidden + 1
}

// viewLSTM is an lstm whose weights are flat's.
func viewLSTM(flat []float64) *lstm {
	l := &lstm{flat: flat, flows: map[uint32]*lstmFlow{}}
	off := 0
	take := func(n int) []float64 {
		v := flat[off : off+n : off+n]
		off += n
		return v
	}
	rows := func(r, c int) [][]float64 {
		m := make([][]float64, r)
		for i := range m {
			m[i] = take(c)
		}
		return m
	}
	l.w1, l.b1 = rows(Hidden, len(rlcc.Names)), take(Hidden)
	l.wx, l.wh, l.b = rows(4*Hidden, Hidden), rows(4*Hidden, Hidden), take(4*Hidden)
	l.w3, l.b3 = take(Hidden), take(1)
	return l
}

// newLSTM draws the weights as PyTorch initialises these layers' shapes, uniform on ±lim: the
// dense layers Glorot (their biases 0), the LSTM ±1/√Hidden.
func newLSTM(rng *rand.Rand) *lstm {
	l := viewLSTM(make([]float64, lstmParams()))
	fill := func(v []float64, lim float64) {
		for i := range v {
			v[i] = float64(float32((2*rng.Float64() - 1) * lim))
		}
	}
	for _, r := range l.w1 {
		fill(r, math.Sqrt(6/float64(Hidden+len(rlcc.Names))))
	}
	k := 1 / math.Sqrt(Hidden)
	for _, r := range append(append([][]float64(nil), l.wx...), l.wh...) {
		fill(r, k)
	}
	fill(l.b, k)
	fill(l.w3, math.Sqrt(6/float64(Hidden+1)))
	return l
}

func (l *lstm) params() []float64 { return l.flat }

func (l *lstm) tape() net { return viewLSTM(l.flat) }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func (l *lstm) decide(flow uint32, x []float64) float64 {
	f := l.flows[flow]
	if f == nil {
		f = &lstmFlow{h: make([]float64, Hidden), c: make([]float64, Hidden)}
		l.flows[flow] = f
	}
	s := lstmStep{x: append([]float64(nil), x...), hPrev: f.h, cPrev: f.c}
	s.a1 = make([]float64, Hidden)
	for i, row := range l.w1 {
		s.a1[i] = affine(l.b1[i], row, x)
	}
	s.h1 = relu(s.a1)
	s.gates = make([]float64, 4*Hidden)
	for r := range s.gates {
		z := affine(affine(l.b[r], l.wx[r], s.h1), l.wh[r], f.h)
		if r/Hidden == 2 {
			s.gates[r] = math.Tanh(z)
		} else {
			s.gates[r] = sigmoid(z)
		}
	}
	s.c, s.h = make([]float64, Hidden), make([]float64, Hidden)
	for j := range Hidden {
		i, fg, g, o := s.gates[j], s.gates[Hidden+j], s.gates[2*Hidden+j], s.gates[3*Hidden+j]
		s.c[j] = fg*f.c[j] + i*g
		s.h[j] = o * math.Tanh(s.c[j])
	}
	s.y = math.Tanh(affine(l.b3[0], l.w3, s.h))
	f.h, f.c = s.h, s.c
	l.order = append(l.order, lstmRef{flow, len(f.steps)})
	f.steps = append(f.steps, s)
	return s.y
}

// backward runs back through each flow's decisions (truncated nowhere: the whole rollout).
func (l *lstm) backward(w, grad []float64) {
	g := viewLSTM(grad)
	weights := map[uint32][]float64{}
	for k, r := range l.order {
		ws := weights[r.flow]
		if ws == nil {
			ws = make([]float64, len(l.flows[r.flow].steps))
			weights[r.flow] = ws
		}
		ws[r.k] = w[k]
	}
	// Flows in the order of their first decision, so the sums' order is fixed.
	for _, r := range l.order {
		if r.k == 0 {
			l.backFlow(g, l.flows[r.flow].steps, weights[r.flow])
		}
	}
	l.flows, l.order = map[uint32]*lstmFlow{}, nil
}

func (l *lstm) backFlow(g *lstm, steps []lstmStep, w []float64) {
	dhNext, dcNext := make([]float64, Hidden), make([]float64, Hidden)
	dz := make([]float64, 4*Hidden)
	for t := len(steps) - 1; t >= 0; t-- {
		s := &steps[t]
		da3 := w[t] * (1 - s.y*s.y)
		g.b3[0] += da3
		dh := make([]float64, Hidden)
		for j := range Hidden {
			g.w3[j] += da3 * s.h[j]
			dh[j] = da3*l.w3[j] + dhNext[j]
		}
		for j := range Hidden {
			i, f, gg, o := s.gates[j], s.gates[Hidden+j], s.gates[2*Hidden+j], s.gates[3*Hidden+j]
			tc := math.Tanh(s.c[j])
			dc := dh[j]*o*(1-tc*tc) + dcNext[j]
			dz[j] = dc * gg * i * (1 - i)
			dz[Hidden+j] = dc * s.cPrev[j] * f * (1 - f)
			dz[2*Hidden+j] = dc * i * (1 - gg*gg)
			dz[3*Hidden+j] = dh[j] * tc * o * (1 - o)
			dcNext[j] = dc * f
		}
		dh1 := make([]float64, Hidden)
		clear(dhNext)
		for r, d := range dz {
			g.b[r] += d
			for j := range Hidden {
				g.wx[r][j] += d * s.h1[j]
				g.wh[r][j] += d * s.hPrev[j]
				dh1[j] += d * l.wx[r][j]
				dhNext[j] += d * l.wh[r][j]
			}
		}
		for i := range Hidden {
			if s.a1[i] <= 0 {
				continue
			}
			g.b1[i] += dh1[i]
			for j, v := range s.x {
				g.w1[i][j] += dh1[i] * v
			}
		}
	}
}

// model is the policy as nicc's float IR: dense(ReLU) → LSTM → dense(tanh), the LSTM's one
// bias vector as its input bias.
func (l *lstm) model(name string) *model.Model {
	copyRows := func(m [][]float64) [][]float64 {
		out := make([][]float64, len(m))
		for i, r := range m {
			out[i] = append([]float64(nil), r...)
		}
		return out
	}
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	return &model.Model{Version: model.NativeVersion, Name: name, Inputs: append([]string(nil), rlcc.Names...),
		Doc: "RL-CC LSTM trained by nicc train (ADPG in netsim)",
		Layers: []model.Layer{
			{Op: model.OpDense, In: len(rlcc.Names), Out: Hidden, W: copyRows(l.w1), B: cp(l.b1), Act: model.ActReLU},
			{Op: model.OpLSTM, In: Hidden, Out: Hidden, W: copyRows(l.wx), R: copyRows(l.wh), B: cp(l.b)},
			{Op: model.OpDense, In: Hidden, Out: 1, W: [][]float64{cp(l.w3)}, B: cp(l.b3), Act: model.ActTanh},
		}}
}

// affine is s + Σ a_i·b_i, summed in the order model.Eval sums, so the exported model gives
// the same bits.
func affine(s float64, a, b []float64) float64 {
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
