// Package train trains an RL-CC policy in netsim with ADPG, the RL-CC papers' analytic
// deterministic policy gradient: on-policy, deterministic. Every decision of every flow in a
// rollout weighs the gradient of the policy's output at its state, ∇θ π(x_t), by
//
//	δ_t = target − max(RTT-inflation_t − β, 0)·√rate_t    (= −o_t / scale)
//
// (positive when the flow is below its share: raise the rate; negative above it); the
// average over the rollout is one Adam step, ascending. The policy is the RL-CC MLP: the
// window (a_{t-1}, o_t, a_{t-2}, o_{t-1}) → 12 → 12 → 1, ReLU, no biases, tanh, its action
// mapped to the rate multiplier by the handler. Rollouts run many-to-one with 2, 4 and 8
// flows; everything else is left unseen for evaluation. A seed gives the same training.
//
// The policy reads o_t = −scale·δ_t, so that sum is the gradient of Σ −o_t·π(x_t)/scale,
// which the bang-bang y = −sign(o) maximises: trained so, the flows of one bottleneck settle
// at unequal rates (many-to-one 16→1: fairness 15 to 17). Options.ActionPenalty λ adds
// −λ·π(x_t)²/2 to each decision's reward, so the weight becomes δ_t − λ·y_t and the optimum
// the proportional y = −o/(λ·scale), clipped. λ = 0 is the papers' ADPG unchanged.
package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// DefaultActionPenalty is λ = 1/6: the proportional optimum y = −o/(λ·scale) has gain 1/2 at
// the papers' scale 12, which shares a bottleneck fairly from 16 to 1024 flows.
const DefaultActionPenalty = 1.0 / 6

// DefaultRolloutNs is a rollout's simulated time: 10 ms. Every flow starts at line rate and
// decides about once an RTT, so the first few ms are the start's congestion; a rollout that
// short teaches little else.
const DefaultRolloutNs = 10_000_000

// Hidden is the MLP's width.
const Hidden = 12

// mlp is the policy's weights: W1 (Hidden×4), W2 (Hidden×Hidden), W3 (1×Hidden), no biases.
type mlp struct {
	w [3][][]float64
}

// newMLP draws Glorot-uniform weights from rng.
func newMLP(rng *rand.Rand) *mlp {
	shape := [3][2]int{{Hidden, len(rlcc.Names)}, {Hidden, Hidden}, {1, Hidden}}
	m := &mlp{}
	for k, s := range shape {
		lim := math.Sqrt(6 / float64(s[0]+s[1]))
		m.w[k] = make([][]float64, s[0])
		for i := range m.w[k] {
			m.w[k][i] = make([]float64, s[1])
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

func (m *mlp) zero() *mlp {
	z := &mlp{}
	for k := range m.w {
		z.w[k] = make([][]float64, len(m.w[k]))
		for i := range m.w[k] {
			z.w[k][i] = make([]float64, len(m.w[k][i]))
		}
	}
	return z
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

// Model is the policy as nicc's float IR: the RL-CC inputs, two ReLU layers, a tanh output,
// no biases.
func (m *mlp) Model(name string) *model.Model {
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

// adam is Adam's state for the MLP's weights (ascending).
type adam struct {
	m, v *mlp
	t    int
	lr   float64
}

func (a *adam) step(p, g *mlp) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1, c2 := 1-math.Pow(b1, float64(a.t)), 1-math.Pow(b2, float64(a.t))
	p.each(func(k, i, j int) {
		gr := g.w[k][i][j]
		a.m.w[k][i][j] = b1*a.m.w[k][i][j] + (1-b1)*gr
		a.v.w[k][i][j] = b2*a.v.w[k][i][j] + (1-b2)*gr*gr
		// The weights stay float32 values, so the policy trained on is the checkpoint, as
		// nicc JSON and as ONNX (float32 tensors) alike.
		p.w[k][i][j] = float64(float32(p.w[k][i][j] + a.lr*(a.m.w[k][i][j]/c1)/(math.Sqrt(a.v.w[k][i][j]/c2)+eps)))
	})
}

// rollout runs the policy on scen in netsim and returns the gradient of the ADPG objective,
// the mean δ and mean |δ| over its decisions, and how many decisions it made.
func rollout(pol *mlp, scen netsim.Scenario, p nicsdk.Params, cfg netsim.Config, penalty float64) (*mlp, float64, float64, int, error) {
	_, _, scale := rlcc.Real(p)
	type decision struct {
		x        []float64
		delta, y float64
	}
	var ds []decision
	ctrl := &netsim.FloatRLCC{Label: "training", Params: p, Policy: func(_ uint32, x []float64) float64 {
		y, _, _ := pol.forward(x)
		ds = append(ds, decision{x: append([]float64(nil), x...), delta: -x[1] / scale, y: y})
		return y
	}}
	if _, err := netsim.Run(scen, ctrl, cfg); err != nil {
		return nil, 0, 0, 0, err
	}
	g := pol.zero()
	var sum, abs float64
	for _, d := range ds {
		pol.addGrad(g, d.x, (d.delta-penalty*d.y)/float64(len(ds)))
		sum += d.delta
		abs += math.Abs(d.delta)
	}
	if len(ds) == 0 {
		return g, 0, 0, 0, fmt.Errorf("train: a rollout of %s made no decisions", scen.Name)
	}
	return g, sum / float64(len(ds)), abs / float64(len(ds)), len(ds), nil
}

// Options say how to train.
type Options struct {
	Iterations int           // Adam steps; each runs one rollout of every training scenario
	Seed       uint64        // the initial weights' and the rollouts' seed
	LR         float64       // Adam's step; 0 is 1e-3
	Flows      []int         // the many-to-one training scenarios; nil is 2, 4 and 8 flows
	DurationNs int64         // a rollout's simulated time; 0 is DefaultRolloutNs
	Params     nicsdk.Params // the RL-CC parameters (target, β, ...)
	// ActionPenalty is λ of the package doc, at least 0: 0 is pure ADPG, DefaultActionPenalty
	// the value that trains a fair policy.
	ActionPenalty float64
	// Progress, if set, hears of each step: its number, the total and its point of the curve.
	Progress func(step, total int, p Point)
}

// Point is one step of the reward curve: the mean δ and mean |δ| over its rollouts'
// decisions (|δ| falls as the flows settle at the target).
type Point struct {
	Step      int     `json:"step"`
	MeanDelta float64 `json:"mean_delta"`
	MeanAbs   float64 `json:"mean_abs_delta"`
	Decisions int     `json:"decisions"`
}

// Result is a training run: the policy and its reward curve.
type Result struct {
	Model *model.Model
	Curve []Point
}

// Train runs ADPG (see the package doc).
func Train(opt Options) (*Result, error) {
	if opt.Iterations < 1 || opt.Iterations > 1_000_000 {
		return nil, fmt.Errorf("train: %d iterations: want 1 to 1000000", opt.Iterations)
	}
	if opt.LR == 0 {
		opt.LR = 1e-3
	}
	if !(opt.LR > 0 && opt.LR < 1) {
		return nil, fmt.Errorf("train: learning rate %v: want it in (0, 1)", opt.LR)
	}
	if !(opt.ActionPenalty >= 0 && opt.ActionPenalty <= 100) {
		return nil, fmt.Errorf("train: action penalty %v: want 0 to 100", opt.ActionPenalty)
	}
	if opt.Flows == nil {
		opt.Flows = []int{2, 4, 8}
	}
	if opt.DurationNs == 0 {
		opt.DurationNs = DefaultRolloutNs
	}
	if err := opt.Params.Validate(); err != nil {
		return nil, err
	}
	var scens []netsim.Scenario
	for _, n := range opt.Flows {
		s, err := netsim.ManyToOne(n)
		if err != nil {
			return nil, err
		}
		scens = append(scens, s)
	}
	pol := newMLP(rand.New(rand.NewPCG(opt.Seed, 0x61647067)))
	optimizer := &adam{m: pol.zero(), v: pol.zero(), lr: opt.LR}
	res := &Result{}
	for step := range opt.Iterations {
		total := pol.zero()
		pt := Point{Step: step}
		for k, s := range scens {
			cfg := netsim.Config{DurationNs: opt.DurationNs, WarmupNs: 1, Seed: opt.Seed + uint64(step*len(scens)+k)}
			g, mean, abs, n, err := rollout(pol, s, opt.Params, cfg, opt.ActionPenalty)
			if err != nil {
				return nil, err
			}
			total.each(func(a, i, j int) { total.w[a][i][j] += g.w[a][i][j] / float64(len(scens)) })
			pt.MeanDelta += mean / float64(len(scens))
			pt.MeanAbs += abs / float64(len(scens))
			pt.Decisions += n
		}
		optimizer.step(pol, total)
		res.Curve = append(res.Curve, pt)
		if opt.Progress != nil {
			opt.Progress(step+1, opt.Iterations, pt)
		}
	}
	res.Model = pol.Model("rlcc_adpg")
	return res, nil
}
