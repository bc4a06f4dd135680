package lab

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/train"
)

// ADPGOptions say what nicc train does (see package train).
type ADPGOptions struct {
	Out        string // output directory: the policy and the reward curve
	Iterations int
	Seed       uint64
	LR         float64
	Flows      []int // training scenarios, many-to-one; nil is 2, 4, 8
	DurationNs int64 // a rollout's simulated time
	// Params are the RL-CC parameters to train under: those ParamSources names (the flags
	// set) over the defaults, a base RTT of 0 the training network's path RTT. The policy
	// files record them (model.Model.RLCC) and every command reads them back.
	Params       golden.Params
	ParamSources artifact.ParamSources
	// Policy is train.PolicyMLP ("" too) or train.PolicyLSTM.
	Policy string
	// ActionPenalty is train.Options.ActionPenalty (0: pure ADPG).
	ActionPenalty float64
	// EvalFlows are the unseen many-to-one scenarios the trained policy is measured on
	// (EvalNs each); nil is 16 and 128.
	EvalFlows []int
	Progress  compiler.ProgressFunc
}

// TrainEvalNs is how long nicc train measures the trained policy on each unseen scenario:
// 100 ms, whose second half is past the start's congestion (128 flows starting at line rate
// take about 15 ms to drain it, deciding once an RTT).
const TrainEvalNs = 100_000_000

// The policies nicc train trains (--policy).
const (
	TrainMLP  = train.PolicyMLP
	TrainLSTM = train.PolicyLSTM
)

// DefaultActionPenalty is nicc train's λ (train.DefaultActionPenalty); MaxActionPenalty and
// MaxTrainIterations bound λ and --iterations.
const (
	DefaultActionPenalty = train.DefaultActionPenalty
	MaxActionPenalty     = train.MaxActionPenalty
	MaxTrainIterations   = train.MaxIterations
)

// TrainedPolicy and TrainCurve are the files nicc train writes into its output directory.
const (
	TrainedPolicy = "policy.json"
	TrainedONNX   = "policy.onnx"
	TrainCurve    = "reward_curve.csv"
)

// TrainReport is what nicc train did.
type TrainReport struct {
	Policy     string               `json:"policy"`      // the trained model's file
	ONNX       string               `json:"onnx"`        // the same policy as ONNX
	Kind       string               `json:"policy_kind"` // mlp or lstm
	Curve      string               `json:"curve"`       // the reward curve's CSV
	Iterations int                  `json:"iterations"`
	Flows      []int                `json:"training_flows"`
	Seed       uint64               `json:"seed"`
	First      train.Point          `json:"first"`
	Last       train.Point          `json:"last"`
	Eval       []*SimReport         `json:"eval"` // the trained policy on unseen many-to-one
	Params     *artifact.RLCCParams `json:"rlcc"`
	Plots      []string             `json:"plots"` // the reward curve, PNG and SVG
}

// Train runs nicc train: ADPG in netsim (package train), the policy written as nicc JSON,
// the reward curve as CSV, then the policy measured on unseen scenarios.
func Train(opt ADPGOptions) (*TrainReport, error) {
	if opt.Out == "" {
		return nil, fmt.Errorf("train needs an output directory (--out)")
	}
	p, src, err := golden.ResolveParams("train", nil, opt.Params, opt.ParamSources)
	if err != nil {
		return nil, err
	}
	if p.BaseRTT == 0 {
		// The rollouts' network's empty-path RTT (train's is netsim's default network).
		if p.BaseRTT, err = (netsim.Config{}).BaseRTTNs(); err != nil {
			return nil, err
		}
		src["base_rtt_us"] = artifact.SourcePathRTT
	}
	var prog func(step, total int, pt train.Point)
	if opt.Progress != nil {
		prog = func(step, total int, _ train.Point) { opt.Progress("train", step, total) }
	}
	topt := train.Options{Iterations: opt.Iterations, Seed: opt.Seed, LR: opt.LR, Flows: opt.Flows,
		DurationNs: opt.DurationNs, Params: p, ActionPenalty: opt.ActionPenalty, Policy: opt.Policy, Progress: prog}
	if topt.Parallel, err = checkTrainMemory(topt); err != nil {
		return nil, err
	}
	res, err := train.Train(topt)
	if err != nil {
		return nil, err
	}
	if err := artifact.OutDir(opt.Out); err != nil {
		return nil, err
	}
	r := &TrainReport{Policy: filepath.Join(opt.Out, TrainedPolicy), Curve: filepath.Join(opt.Out, TrainCurve),
		Iterations: opt.Iterations, Flows: opt.Flows, Seed: opt.Seed, First: res.Curve[0], Last: res.Curve[len(res.Curve)-1],
		Params: artifact.NewRLCCParams(p).WithSources(src), Kind: cmp.Or(opt.Policy, train.PolicyMLP)}
	if r.Flows == nil {
		r.Flows = []int{2, 4, 8}
	}
	res.Model.RLCC = golden.ModelParams(p) // one truth: every command reads them back from the files
	js, err := model.Marshal(res.Model)
	if err != nil {
		return nil, err
	}
	if err := artifact.WriteOut(r.Policy, js); err != nil {
		return nil, err
	}
	r.ONNX = filepath.Join(opt.Out, TrainedONNX)
	pb, err := onnx.Encode(res.Model)
	if err != nil {
		return nil, err
	}
	if err := artifact.WriteOut(r.ONNX, pb); err != nil {
		return nil, err
	}
	var csv bytes.Buffer
	csv.WriteString("step,mean_delta,mean_abs_delta,steady_abs_delta,decisions\n")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, pt := range res.Curve {
		fmt.Fprintf(&csv, "%d,%s,%s,%s,%d\n", pt.Step, g(pt.MeanDelta), g(pt.MeanAbs), g(pt.SteadyAbs), pt.Decisions)
	}
	if err := artifact.WriteOut(r.Curve, csv.Bytes()); err != nil {
		return nil, err
	}
	if r.Plots, err = plotTrainCurve(res.Curve, opt.Out, "reward_curve"); err != nil {
		return nil, err
	}
	evalFlows := opt.EvalFlows
	if evalFlows == nil {
		evalFlows = []int{16, 128}
	}
	for _, n := range evalFlows {
		s, err := Sim(SimOptions{Scenario: "many-to-one", Flows: n, Policy: r.Policy, Net: netsim.Config{DurationNs: TrainEvalNs, ClockPPM: netsim.StandardClockPPM}})
		if err != nil {
			return nil, err
		}
		r.Eval = append(r.Eval, s)
	}
	return r, nil
}

// checkTrainMemory refuses a training whose largest rollout, with the decisions its policy
// keeps for the gradient, is over MemoryLimit (or SimEventLimit). It returns how many rollouts
// may run at once: one a CPU when a step's rollouts all fit the limit together, else one.
func checkTrainMemory(opt train.Options) (parallel int, err error) {
	scen, cfg, fp, kept, all, err := train.Footprint(opt)
	if err != nil {
		return 0, err
	}
	policy := cmp.Or(opt.Policy, train.PolicyMLP)
	per := train.DecisionBytes[policy]
	if err := memlimit.CheckSimFootprint("a rollout of "+memlimit.SimWhat(scen, cfg), cfg, fp, kept,
		fmt.Sprintf("the %s's decisions kept for the gradient (up to %.3g, one a flow and base RTT, %.0f bytes each)", policy, fp.Decisions, per),
		"a shorter --rollout or fewer --flows"); err != nil {
		return 0, err
	}
	if all > memlimit.Limit {
		return 1, nil
	}
	return runtime.GOMAXPROCS(0), nil
}

// WriteText prints the training's summary for a terminal.
func (r *TrainReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	termtext.Printf(tw, "trained\t%s, %d ADPG steps on many-to-one %v, seed %d (%s)\n", r.Kind, r.Iterations, r.Flows, r.Seed, r.Params)
	termtext.Printf(tw, "reward\tmean |δ| %.4f → %.4f, mean δ %.4f → %.4f (δ = target − max(inflation − β, 0)·√rate)\n",
		r.First.MeanAbs, r.Last.MeanAbs, r.First.MeanDelta, r.Last.MeanDelta)
	for _, e := range r.Eval {
		theory := r.Params.TargetReal*math.Sqrt(float64(e.Flows)) + r.Params.BetaReal
		termtext.Printf(tw, "unseen\t%s: SU %.2f%%, FR %.1f, Jain %.4f, QL %s µs (p99 %s), DR %s Gb/s, RTT inflation %.3f (Eq. 2: %.3f)\n", e.Scenario, e.Utilization,
			e.Fairness, e.Jain, termtext.Num3(e.QueueMeanUs), termtext.Num3(e.QueueP99Us), termtext.Num3(e.DropGbps), e.RTTInflation, theory)
	}
	termtext.Printf(tw, "wrote\t%s\n", strings.Join(append([]string{r.Policy, r.ONNX, r.Curve}, r.Plots...), ", "))
	return tw.Flush()
}
