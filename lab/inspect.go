package lab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/model"
)

// Inspection is what nicc inspect prints of a model: its summary, as loaded.
type Inspection struct {
	File   string `json:"file"`
	Format string `json:"format"`
	FLOPs  int    `json:"flops_per_decision"`
	// Warnings are the sanity probe's, under the model's RL-CC parameters (else the defaults),
	// for a model whose inputs are named in an RL-CC layout (probeWarnings).
	Warnings []string `json:"warnings,omitempty"`
	*model.Summary
}

// Inspect loads path (in format, nil to detect it; inputs renames its inputs, nil keeps them)
// and summarizes it.
func Inspect(path string, format *model.FileFormat, inputs []string) (*Inspection, error) {
	m, f, err := golden.LoadModelAs(path, format, inputs)
	if err != nil {
		return nil, err
	}
	s := m.Summarize()
	in := &Inspection{File: path, Format: f.Name, FLOPs: s.Ops.FLOPs(), Summary: s}
	if golden.ResolveHandler(artifact.HandlerAuto, m.Inputs) == artifact.HandlerRLCC {
		// Probed as the handler would run it: in the policy's order, under the parameters
		// the file carries (else the defaults). A layout the handler cannot run is only
		// described here; compile says why.
		pm, _, _, err := golden.PolicyOrder(path, m, "")
		p, _, perr := golden.ResolveParams(path, m, golden.Params{}, nil)
		if err == nil && perr == nil {
			in.Warnings = golden.ProbeWarnings(pm, p)
		}
	}
	return in, nil
}

// WriteText prints the inspection for a terminal.
func (in *Inspection) WriteText(w io.Writer) error {
	s, path, f := in.Summary, in.File, in.Format
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	termtext.Printf(tw, "model\t%s (%s, %s)\n", s.Name, f, path)
	termtext.Printf(tw, "kind\t%s\n", s.Kind)
	termtext.Printf(tw, "shape\t%s\n", s.Shape)
	termtext.Printf(tw, "inputs\t%d: %s\n", len(s.Inputs), strings.Join(s.Inputs, ", "))
	termtext.Printf(tw, "outputs\t%d\n", s.Outputs)
	termtext.Printf(tw, "params\t%d\n", s.Params)
	termtext.Printf(tw, "ops\t%d FLOPs per decision (%d mul-add, %d add, %d compare, %d tanh/sigmoid)\n",
		s.Ops.FLOPs(), s.Ops.MulAdd, s.Ops.Add, s.Ops.Compare, s.Ops.Nonlinear)
	if s.StateFloats > 0 {
		termtext.Printf(tw, "state\t%d floats carried between decisions\n", s.StateFloats)
	}
	if s.Doc != "" {
		termtext.Printf(tw, "doc\t%s\n", s.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Layers) > 0 {
		fmt.Fprintln(w, "layers")
		for i, l := range s.Layers {
			act := l.Act.String()
			if l.Op == model.OpLSTM {
				act = "gates i,f,g,o"
			}
			bias := "no bias"
			if l.HasBias {
				bias = "bias"
			}
			termtext.Printf(tw, "  %d\t%s\t%d→%d\t%s\t%d params\t%s\tweights [%s, %s]\n", i, l.Op, l.In, l.Out,
				act, l.Params, bias, termtext.Num(l.Weights.Min), termtext.Num(l.Weights.Max))
		}
	}
	if t := s.Trees; t != nil {
		termtext.Printf(tw, "trees\t%d trees, max depth %d, %d nodes, %d leaves\n", t.Count, t.MaxDepth, t.Nodes, t.Leaves)
		termtext.Printf(tw, "score\t%s(%s + Σ leaf), leaves [%s, %s]\n", t.Transform, termtext.Num(t.Base), termtext.Num(t.LeafRange.Min), termtext.Num(t.LeafRange.Max))
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "thresholds")
		for _, th := range s.Thresholds {
			termtext.Printf(tw, "  %s\t%d splits\t[%s, %s]\n", th.Feature, th.Splits, termtext.Num(th.Min), termtext.Num(th.Max))
		}
	}
	return tw.Flush()
}

// num is v in the shortest form that reads back the same.
