package lab

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/plot"

	"github.com/nicc-dev/nicc/rlcc"
)

// TheoryFlows are the many-to-one flow counts nicc sim --theory runs by default.
var TheoryFlows = []int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}

// TheoryPoint is one flow count: the measured mean RTT inflation and the NIC paper's Eq. 2.
type TheoryPoint struct {
	Flows     int     `json:"flows"`
	Inflation float64 `json:"rtt_inflation"`
	Theory    float64 `json:"theory"` // target·√N + β
	Ratio     float64 `json:"ratio"`  // measured ÷ theory
	SU        float64 `json:"su_percent"`
	DropGbps  float64 `json:"dr_gbps"`
}

// TheoryReport checks a policy against Eq. 2: at the optimum, E[RTT-inflation] = target·√N + β.
type TheoryReport struct {
	Policy string        `json:"policy"`
	Target float64       `json:"target"`
	Beta   float64       `json:"beta"`
	Points []TheoryPoint `json:"points"`
	Plots  []string      `json:"plots,omitempty"`
	// Warnings are the sanity probe's on the policy (SimReport.Warnings).
	Warnings []string `json:"warnings,omitempty"`
}

// SimTheory runs opt's policy on many-to-one at each flow count and compares its mean RTT
// inflation with target·√N + β, under the RL-CC parameters the policy decides with (a compile's
// own, with those a DOCA program is given at run time over them; a model file's, each from its
// flag, else the file, else the default, as the runs report them).
func SimTheory(opt SimOptions, flows []int) (*TheoryReport, error) {
	if flows == nil {
		flows = TheoryFlows
	}
	p, err := simParams(opt)
	if err != nil {
		return nil, err
	}
	target, beta, _ := rlcc.Real(p)
	rep := &TheoryReport{Policy: opt.Policy, Target: target, Beta: beta}
	for _, n := range flows {
		o := opt
		o.Scenario, o.Flows, o.PlotDir = "many-to-one", n, ""
		r, err := Sim(o)
		if err != nil {
			return nil, err
		}
		rep.Warnings = r.Warnings
		if r.Params != nil && !artifact.IsCompileDir(opt.Policy) {
			// A model file decides under the parameters it carries unless a flag says
			// otherwise: Eq. 2 is of those (the run reports them).
			target, beta = r.Params.TargetReal, r.Params.BetaReal
			rep.Target, rep.Beta = target, beta
		}
		th := eq2(target, beta, float64(n))
		rep.Points = append(rep.Points, TheoryPoint{Flows: n, Inflation: r.RTTInflation, Theory: th, Ratio: r.RTTInflation / th,
			SU: r.Utilization, DropGbps: r.DropGbps})
	}
	if opt.PlotDir != "" {
		if rep.Plots, err = plotTheory(rep, opt.PlotDir); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// simParams are the RL-CC parameters opt's policy decides with: a compile's own, with those a
// DOCA program is given at run time over them; or opt.Params.
func simParams(opt SimOptions) (golden.Params, error) {
	p, err := golden.ParamsOrDefault(opt.Params)
	if err != nil || !artifact.IsCompileDir(opt.Policy) {
		return p, err
	}
	r, err := artifact.ReadReport(opt.Policy)
	if err != nil {
		return p, err
	}
	compiled := r.FixedParams()
	for _, s := range opt.DOCASet {
		if rp, ok := docaRunParams[s.Flag]; ok {
			*rp.field(&compiled) = *rp.field(&p)
		}
	}
	return compiled, nil
}

// WriteText prints one line a flow count.
func (r *TheoryReport) WriteText(w io.Writer) error {
	termtext.Printf(w, "RTT inflation against the NIC paper's Eq. 2, target·√N + β (target %s, β %s), many-to-one, %s\n", termtext.Num3(r.Target), termtext.Num3(r.Beta), r.Policy)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flows\tmeasured\ttheory\tratio\tSU %\tDR Gb/s\t")
	for _, p := range r.Points {
		termtext.Printf(tw, "%d\t%.4f\t%.4f\t%.3f\t%.2f\t%s\t\n", p.Flows, p.Inflation, p.Theory, p.Ratio, p.SU, termtext.Num3(p.DropGbps))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range r.Plots {
		termtext.Printf(w, "plot      %s\n", f)
	}
	return nil
}

func plotTheory(r *TheoryReport, dir string) ([]string, error) {
	t := plot.Theory{Title: fmt.Sprintf("RTT inflation of %s against target·√N + β", filepath.Base(r.Policy))}
	for _, pt := range r.Points {
		t.Flows, t.Measured, t.Eq2 = append(t.Flows, float64(pt.Flows)), append(t.Measured, pt.Inflation), append(t.Eq2, pt.Theory)
	}
	f, err := plot.TheoryFigure(t)
	if err != nil {
		return nil, err
	}
	return writeFigure(dir, "sim_theory", f)
}
