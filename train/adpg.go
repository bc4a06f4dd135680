// Package train trains an RL-CC policy in netsim with ADPG, the RL-CC papers' analytic
// deterministic policy gradient: on-policy, deterministic. Every decision of every flow in a
// rollout weighs the gradient of the policy's output at its state, ∇θ π(x_t), by
//
//	δ_t = target − max(RTT-inflation_t − β, 0)·√rate_t    (= −o_t / scale)
//
// (positive when the flow is below its share: raise the rate; negative above it); the
// average over the rollout is one Adam step, ascending. The policy is the RL-CC MLP (mlp.go):
// the window (a_{t-1}, o_t, a_{t-2}, o_{t-1}) → 12 → 12 → 1, ReLU, no biases, tanh; or the
// RL-CC LSTM (lstm.go): the window → 12 ReLU → LSTM 12 → 1 tanh, each flow with its own state,
// its gradient taken back through each flow's whole rollout. The handler maps the action to
// the rate multiplier. Rollouts run many-to-one with 2, 4 and 8
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
	"sync"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// The policies Train trains (Options.Policy).
const (
	PolicyMLP  = "mlp"  // (a_{t-1}, o_t, a_{t-2}, o_{t-1}) → 12 → 12 → 1, ReLU, no biases, tanh
	PolicyLSTM = "lstm" // the same window → 12 ReLU → LSTM 12 → 1 tanh, with biases
)

// DefaultActionPenalty is λ = 1: the proportional optimum y = −o/(λ·scale) has gain 1/12 at
// the papers' scale 12. It shares a bottleneck fairly in nicc's network and where every TX
// event is 4 KB and a slow flow decides seldom (NVIDIA's CCsim, nicc sim --preset ccsim):
// 16→1 in CCsim through its compiled firmware, SU 98.5%, FR 99.1 (docs/CALIBRATION.md). The
// gain 1/2 of λ = 1/6 (the default before) makes the queue swing, and flows that decide at
// different rates lock onto it at different rates there (FR 49 to 51).
const DefaultActionPenalty = 1.0

// DefaultRolloutNs is a rollout's simulated time: 10 ms. Every flow starts at line rate and
// decides about once an RTT, so the first few ms are the start's congestion; a rollout that
// short teaches little else.
const DefaultRolloutNs = 10_000_000

// adam is Adam's state for a parameter vector (ascending).
type adam struct {
	m, v []float64
	t    int
	lr   float64
}

func newAdam(n int, lr float64) *adam {
	return &adam{m: make([]float64, n), v: make([]float64, n), lr: lr}
}

func (a *adam) step(p, g []float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1, c2 := 1-math.Pow(b1, float64(a.t)), 1-math.Pow(b2, float64(a.t))
	for i, gr := range g {
		a.m[i] = b1*a.m[i] + (1-b1)*gr
		a.v[i] = b2*a.v[i] + (1-b2)*gr*gr
		// The weights stay float32 values, so the policy trained on is the checkpoint, as
		// nicc JSON and as ONNX (float32 tensors) alike.
		p[i] = float64(float32(p[i] + a.lr*(a.m[i]/c1)/(math.Sqrt(a.v[i]/c2)+eps)))
	}
}

// net is a policy ADPG trains: its parameters as one vector, its decisions during a
// rollout, and the gradient of those decisions.
type net interface {
	params() []float64
	// decide is y at x for the flow, advancing the flow's state, if it keeps one; the step is
	// kept for backward.
	decide(flow uint32, x []float64) float64
	// backward adds Σ_k w[k]·∇θ y_k over the steps kept since the last call (k in decision
	// order) to grad, then forgets them and every flow's state.
	backward(w, grad []float64)
	// tape is a net with the same weights (shared, read only during rollouts) and its own
	// empty record of decisions, for a rollout that runs beside others.
	tape() net
	model(name string) *model.Model
}

// rollout runs the policy on scen in netsim and returns the gradient of the ADPG objective
// and its point of the curve (Step unset): the mean δ and mean |δ| over its decisions, the
// mean |δ| over the later half of them, and how many decisions it made.
func rollout(pol net, scen netsim.Scenario, p nicsdk.Params, cfg netsim.Config, penalty float64) ([]float64, Point, error) {
	_, _, scale := rlcc.Real(p)
	var w, deltas []float64
	ctrl := &netsim.FloatRLCC{Label: "training", Params: p, Policy: func(flow uint32, x []float64) float64 {
		y := pol.decide(flow, x)
		delta := -x[1] / scale
		w = append(w, delta-penalty*y)
		deltas = append(deltas, delta)
		return y
	}}
	if _, err := netsim.Run(scen, ctrl, cfg); err != nil {
		return nil, Point{}, err
	}
	if len(w) == 0 {
		return nil, Point{}, fmt.Errorf("train: a rollout of %s made no decisions", scen.Name)
	}
	for k := range w {
		w[k] /= float64(len(w))
	}
	g := make([]float64, len(pol.params()))
	pol.backward(w, g)
	var sum, abs, steady float64
	half := len(deltas) / 2
	for k, d := range deltas {
		sum += d
		abs += math.Abs(d)
		if k >= half {
			steady += math.Abs(d)
		}
	}
	n := float64(len(deltas))
	return g, Point{MeanDelta: sum / n, MeanAbs: abs / n, SteadyAbs: steady / (n - float64(half)), Decisions: len(deltas)}, nil
}

// Options say how to train.
type Options struct {
	// Policy is what is trained: PolicyMLP ("" too) or PolicyLSTM.
	Policy     string
	Iterations int           // Adam steps; each runs one rollout of every training scenario
	Seed       uint64        // the initial weights' and the rollouts' seed
	LR         float64       // Adam's step; 0 is 1e-3
	Flows      []int         // the many-to-one training scenarios; nil is 2, 4 and 8 flows
	DurationNs int64         // a rollout's simulated time; 0 is DefaultRolloutNs
	Params     nicsdk.Params // the RL-CC parameters (target, β, ...)
	// ActionPenalty is λ of the package doc, at least 0: 0 is pure ADPG, DefaultActionPenalty
	// the value that trains a fair policy.
	ActionPenalty float64
	// Parallel is how many of a step's rollouts run at once, each keeping its own decisions
	// (so their memory adds up: Footprint's all); 0 is one at a time. The policy trained is
	// the same whatever it is: the gradients are summed in the scenarios' order.
	Parallel int
	// Progress, if set, hears of each step: its number, the total and its point of the curve.
	Progress func(step, total int, p Point)
}

// Point is one step of the reward curve: the mean δ and mean |δ| over its rollouts'
// decisions (|δ| falls as the flows settle at the target).
type Point struct {
	Step      int     `json:"step"`
	MeanDelta float64 `json:"mean_delta"`
	MeanAbs   float64 `json:"mean_abs_delta"`
	// SteadyAbs is the mean |δ| over the later half of each rollout's decisions: where the
	// policy holds the queue, after the start's burst (every flow at line rate), which
	// dominates MeanAbs whatever the policy learns.
	SteadyAbs float64 `json:"steady_abs_delta"`
	Decisions int     `json:"decisions"`
}

// Result is a training run: the policy and its reward curve.
type Result struct {
	Model *model.Model
	Curve []Point
}

// The bounds of Options.Iterations and Options.ActionPenalty.
const (
	MaxIterations    = 1_000_000
	MaxActionPenalty = 100
)

// DecisionBytes is what a rollout keeps of each decision for the backward pass, by policy:
// peak resident bytes measured with /usr/bin/time -v over rollouts of 100 and 400 ms at 8
// flows (150 for the MLP: its inputs and weight; 1890 for the LSTM: every activation of the
// step), rounded up.
var DecisionBytes = map[string]float64{PolicyMLP: 200, PolicyLSTM: 2400}

// Footprint is the largest of opt's rollouts (its scenario, by its flows), as netsim
// estimates it, and the bytes the policy keeps of its decisions, at most one a flow and base
// RTT, for the gradient; all is the bytes of every rollout of a step together (network and
// decisions kept), what they need when they all run at once (Options.Parallel).
func Footprint(opt Options) (scen netsim.Scenario, cfg netsim.Config, fp netsim.Footprint, kept, all float64, err error) {
	if err := opt.defaults(); err != nil {
		return scen, cfg, fp, 0, 0, err
	}
	cfg = netsim.Config{DurationNs: opt.DurationNs, WarmupNs: 1}
	for _, n := range opt.Flows {
		s, err := netsim.ManyToOne(n)
		if err != nil {
			return scen, cfg, fp, 0, 0, err
		}
		f, err := netsim.Estimate(s, cfg, 0)
		if err != nil {
			return scen, cfg, fp, 0, 0, err
		}
		k := f.Decisions * DecisionBytes[opt.Policy]
		if f.Bytes+k > fp.Bytes+kept {
			scen, fp, kept = s, f, k
		}
		all += f.Bytes + k
	}
	return scen, cfg, fp, kept, all, nil
}

// defaults checks opt and fills in its defaults.
func (opt *Options) defaults() error {
	if opt.Iterations < 1 || opt.Iterations > MaxIterations {
		return fmt.Errorf("train: %d iterations: want 1 to %d", opt.Iterations, MaxIterations)
	}
	if opt.LR == 0 {
		opt.LR = 1e-3
	}
	if !(opt.LR > 0 && opt.LR < 1) {
		return fmt.Errorf("train: learning rate %v: want it in (0, 1)", opt.LR)
	}
	if !(opt.ActionPenalty >= 0 && opt.ActionPenalty <= MaxActionPenalty) {
		return fmt.Errorf("train: action penalty %v: want 0 to %v", opt.ActionPenalty, MaxActionPenalty)
	}
	if opt.Policy == "" {
		opt.Policy = PolicyMLP
	}
	if _, ok := DecisionBytes[opt.Policy]; !ok {
		return fmt.Errorf("train: policy %q: want %s or %s", opt.Policy, PolicyMLP, PolicyLSTM)
	}
	if opt.Flows == nil {
		opt.Flows = []int{2, 4, 8}
	}
	if opt.DurationNs == 0 {
		opt.DurationNs = DefaultRolloutNs
	}
	return opt.Params.Validate()
}

// Train runs ADPG (see the package doc).
func Train(opt Options) (*Result, error) {
	if err := opt.defaults(); err != nil {
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
	rng := rand.New(rand.NewPCG(opt.Seed, 0x61647067))
	var pol net
	switch opt.Policy {
	case PolicyMLP:
		pol = newMLP(rng)
	case PolicyLSTM:
		pol = newLSTM(rng)
	default:
		return nil, fmt.Errorf("train: policy %q: want %s or %s", opt.Policy, PolicyMLP, PolicyLSTM)
	}
	optimizer := newAdam(len(pol.params()), opt.LR)
	res := &Result{}
	type outcome struct {
		grad  []float64
		point Point
		err   error
	}
	slots := make(chan struct{}, max(opt.Parallel, 1))
	for step := range opt.Iterations {
		outs := make([]outcome, len(scens))
		var wg sync.WaitGroup
		for k, s := range scens {
			cfg := netsim.Config{DurationNs: opt.DurationNs, WarmupNs: 1, Seed: opt.Seed + uint64(step*len(scens)+k)}
			tape := pol.tape()
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, r, err := rollout(tape, s, opt.Params, cfg, opt.ActionPenalty)
				outs[k] = outcome{g, r, err}
				<-slots
			}()
		}
		wg.Wait()
		total := make([]float64, len(pol.params()))
		pt := Point{Step: step}
		for _, o := range outs {
			if o.err != nil {
				return nil, o.err
			}
			for i := range total {
				total[i] += o.grad[i] / float64(len(scens))
			}
			pt.MeanDelta += o.point.MeanDelta / float64(len(scens))
			pt.MeanAbs += o.point.MeanAbs / float64(len(scens))
			pt.SteadyAbs += o.point.SteadyAbs / float64(len(scens))
			pt.Decisions += o.point.Decisions
		}
		optimizer.step(pol.params(), total)
		res.Curve = append(res.Curve, pt)
		if opt.Progress != nil {
			opt.Progress(step+1, opt.Iterations, pt)
		}
	}
	res.Model = pol.model(map[string]string{PolicyMLP: "rlcc_adpg", PolicyLSTM: "rlcc_adpg_lstm"}[opt.Policy])
	return res, nil
}
