package train

import (
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

// Hidden is the MLP's width.
const Hidden = 12

// mlp is the policy's weights: W1 (Hidden×4), W2 (Hidden×Hidden), W3 (1×Hidden), no biases,
// their rows views of one vector (flat), with the inputs of the decisions since the last
// backward.
type mlp struct {
	w    [3][][]float64
	flat []float64
	xs   [][]float64
}

var mlpShape = [3][2]int{{Hidden, len(rlcc.Names)}, {Hidden, Hidden}, {1, Hidden}}

// viewMLP is an mlp whose weights are flat's (its length the MLP's parameter count).
func viewMLP(flat []float64) *mlp {
	m := &mlp{flat: flat}
	off := 0
	for k, s := range mlpShape {
		m.w[k] = make([][]float64, s[0])
		for i := range m.w[k] {
			m.w[k][i] = flat[off : off+s[1] : off+s[1]]
			off += s[1]
		}
	}
	return m
}

func mlpParams() int {
	n := 0
	for _, s := range mlpShape {
		n += s[0] * s[1]
	}
	return n
}

// newMLP draws Glorot-uniform weights from rng.
func newMLP(rng *rand.Rand) *mlp {
	m := viewMLP(make([]float64, mlpParams()))
	for k, s := range mlpShape {
		lim := math.Sqrt(6 / float64(s[0]+s[1]))
		for i := range m.w[k] {
			for j := range m.w[k][i] {
				m.w[k][i][j] = float64(float32((2*rng.Float64() - 1) * lim))
			}
		}
	}
	return m
}

// acts are one decision's activations: each hidden layer's pre-activation and its relu.
type acts struct {
	a1, h1, a2, h2 [Hidden]float64
}

// forward is π(x), its activations in s (in place: a decision allocates nothing). Each sum
// starts at 0 and adds w·x in index order.
func (m *mlp) forward(x []float64, s *acts) float64 {
	for i, row := range m.w[0] {
		z := 0.0
		for j, v := range row {
			z += v * x[j]
		}
		s.a1[i], s.h1[i] = z, max(z, 0)
	}
	for i, row := range m.w[1] {
		z := 0.0
		for j, v := range row {
			z += v * s.h1[j]
		}
		s.a2[i], s.h2[i] = z, max(z, 0)
	}
	z := 0.0
	for j, v := range m.w[2][0] {
		z += v * s.h2[j]
	}
	return math.Tanh(z)
}

// addGrad adds scale·∇θ π(x) to g.
func (m *mlp) addGrad(g *mlp, x []float64, scale float64) {
	var s acts
	y := m.forward(x, &s)
	dz := scale * (1 - y*y) // through tanh
	var d1, d2 [Hidden]float64
	for j := range Hidden {
		g.w[2][0][j] += dz * s.h2[j]
		if s.a2[j] > 0 {
			d2[j] = dz * m.w[2][0][j]
		}
	}
	for i := range Hidden {
		for j := range Hidden {
			g.w[1][i][j] += d2[i] * s.h1[j]
			if s.a1[j] > 0 {
				d1[j] += d2[i] * m.w[1][i][j]
			}
		}
	}
	for i := range Hidden {
		for j, v := range x {
			g.w[0][i][j] += d1[i] * v
		}
	}
}

func (m *mlp) zero() *mlp { return viewMLP(make([]float64, len(m.flat))) }

func (m *mlp) params() []float64 { return m.flat }

func (m *mlp) decide(_ uint32, x []float64) float64 {
	var s acts
	y := m.forward(x, &s)
	m.xs = append(m.xs, append([]float64(nil), x...))
	return y
}

func (m *mlp) tape() net { return viewMLP(m.flat) }

func (m *mlp) backward(w, grad []float64) {
	g := viewMLP(grad)
	for k, x := range m.xs {
		m.addGrad(g, x, w[k])
	}
	m.xs = nil
}

// each calls f on every weight of m and the same place of others.
func (m *mlp) each(f func(k, i, j int)) {
	for k := range m.w {
		for i := range m.w[k] {
			for j := range m.w[k][i] {
				f(k, i, j)
			}
		}
	}
}

// model is the policy as nicc's float IR: the RL-CC inputs, two ReLU layers, a tanh output,
// no biases.
func (m *mlp) model(name string) *model.Model {
	acts := []model.Activation{model.ActReLU, model.ActReLU, model.ActTanh}
	out := &model.Model{Version: model.NativeVersion, Name: name, Inputs: append([]string(nil), rlcc.Names...),
		Doc: "RL-CC MLP trained by nicc train (ADPG in netsim)"}
	for k, w := range m.w {
		rows := make([][]float64, len(w))
		for i := range w {
			rows[i] = append([]float64(nil), w[i]...)
		}
		out.Layers = append(out.Layers, model.Layer{Op: model.OpDense, In: len(w[0]), Out: len(w), W: rows, Act: acts[k]})
	}
	return out
}

func relu(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = max(x, 0)
	}
	return out
}
