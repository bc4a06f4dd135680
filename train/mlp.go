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

// forward is π(x) and the pre-activations the backward pass needs.
func (m *mlp) forward(x []float64) (y float64, a1, a2 []float64) {
	a1 = matVec(m.w[0], x)
	h1 := relu(a1)
	a2 = matVec(m.w[1], h1)
	h2 := relu(a2)
	return math.Tanh(matVec(m.w[2], h2)[0]), a1, a2
}

// addGrad adds scale·∇θ π(x) to g.
func (m *mlp) addGrad(g *mlp, x []float64, scale float64) {
	y, a1, a2 := m.forward(x)
	h1, h2 := relu(a1), relu(a2)
	dz := scale * (1 - y*y) // through tanh
	d2 := make([]float64, Hidden)
	for j := range Hidden {
		g.w[2][0][j] += dz * h2[j]
		if a2[j] > 0 {
			d2[j] = dz * m.w[2][0][j]
		}
	}
	d1 := make([]float64, Hidden)
	for i := range Hidden {
		for j := range Hidden {
			g.w[1][i][j] += d2[i] * h1[j]
			if a1[j] > 0 {
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
	y, _, _ := m.forward(x)
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

func matVec(w [][]float64, x []float64) []float64 {
	y := make([]float64, len(w))
	for i, row := range w {
		for j, v := range row {
			y[i] += v * x[j]
		}
	}
	return y
}

func relu(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = max(x, 0)
	}
	return out
}
