package compiler

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/verify"
)

// outputWhat names what the model's output is, for the fidelity figures.
func (c *compilation) outputWhat() string {
	switch {
	case c.Handler == artifact.HandlerRLCC:
		return "policy output y (the action in [-1, 1] the handler maps to a multiplier)"
	case c.Float.Ensemble != nil && c.Float.Ensemble.Transform == model.TransformSigmoid:
		return "probability (the sigmoid applied in float64 to the firmware's score)"
	}
	return "score"
}

// report assembles the report of a compile whose stages all passed and writes report.json.
// Over budget, the report is returned with a *CheckError and its Failure says so.
func (c *compilation) report() (*artifact.CompileReport, error) {
	start := time.Now()
	r, err := c.assemble()
	if err != nil {
		return nil, err
	}
	var check error
	if b := r.Budget; !b.Fits {
		check = &budget.CheckError{Err: fmt.Errorf("%s is over budget on %s: WCET %d cycles = %s µs > budget %s µs",
			r.Entry, b.Core.Name, b.WCETCycles, budget.Micros(b.WCETMicros), budget.MicrosAsWritten(b.BudgetMicros))}
		r.Failure = &artifact.Failure{Stage: "budget", Kind: artifact.FailOverBudget.String(), Message: check.Error()}
	}
	if err := c.checkMemory(); err != nil { // built with --force
		if check != nil {
			err = &budget.CheckError{Err: &artifact.OverMemoryError{Msg: err.Error() + "; and " + check.Error()}}
		}
		check, r.Failure = err, artifact.FailureOf("budget", err)
	}
	return c.writeReport(r, start, check)
}

// failed assembles the report of a compile that stage stopped with check, a *CheckError,
// from the stages that passed, and writes report.json: CI wants it most when a check fails.
func (c *compilation) failed(stage string, check error) (*artifact.CompileReport, error) {
	start := time.Now()
	r, err := c.assemble()
	if err != nil {
		return nil, fmt.Errorf("%w (%s not written: %v)", check, artifact.ReportFile, err)
	}
	r.Failure = artifact.FailureOf(stage, c.named(check))
	return c.writeReport(r, start, check)
}

// writeReport times the report stage, writes report.json and returns r with check.
func (c *compilation) writeReport(r *artifact.CompileReport, start time.Time, check error) (*artifact.CompileReport, error) {
	c.times = append(c.times, artifact.StageTime{Stage: "report", Seconds: time.Since(start).Seconds()})
	r.Times = c.times
	var data []byte
	m, err := c.manifest(r)
	r.Manifest = m
	if err == nil {
		data, err = json.MarshalIndent(r, "", "  ")
	}
	if err == nil {
		err = artifact.WriteOut(filepath.Join(c.dir, artifact.ReportFile), append(data, '\n'))
	}
	switch {
	case err != nil && check != nil:
		return r, fmt.Errorf("%w (%s not written: %v)", check, artifact.ReportFile, err)
	case err != nil:
		return nil, err
	}
	return r, check
}

// passed reports whether stage ran and passed.
func (c *compilation) passed(stage string) bool { return slices.Contains(c.passedStages, stage) }

// assemble fills the report from the stages that passed.
func (c *compilation) assemble() (*artifact.CompileReport, error) {
	r := &artifact.CompileReport{Out: c.opt.Out, Files: c.files, Budget: c.budget, StateLimit: nicsdk.CtxBytes, Prove: c.proved}
	if c.Float == nil {
		return r, nil
	}
	r.Model = artifact.ModelInfo{File: c.opt.Model, Format: c.Format.Name, Name: c.Float.Name, Inputs: c.Float.Inputs}
	r.Handler, r.Entry, r.Notes = c.Handler.String(), artifact.EntryPolicy, c.Notes
	r.StateBytes = golden.StateBytes(c.Handler, c.Layout())
	r.LowerBound, r.Build, r.VectorFiles = c.bound, c.plan, c.vectorFiles
	if c.Handler == artifact.HandlerRLCC {
		r.Entry = artifact.EntryHandler
		r.Params = artifact.NewRLCCParams(c.Params).WithSources(c.ParamSources)
		r.Layout = c.InLayout
		r.Warnings = golden.ProbeWarnings(c.Float, c.Params)
	}
	if c.passed("emit") {
		r.Host = []string{path.Join(artifact.HostDir, "driver.c")}
	}
	if c.passed("build") {
		text, rodata, err := textBytes(c.elf)
		if err != nil {
			return nil, err
		}
		r.Firmware, r.CodeBytes, r.RodataBytes = artifact.FirmwareFile, text, rodata
		if p, err := fwsim.LookupProfile(c.opt.Core); err == nil && text+rodata > p.MemoryBytes {
			src := "nicc budget --list-cores"
			if strings.HasPrefix(p.Sources["memory_bytes"], "assumption") {
				src = "assumed; " + src
			}
			r.Notes = append(r.Notes, fmt.Sprintf("the firmware's %d bytes of code and tables are over the %d bytes of %s's memory (%s): its cycle costs assume they fit",
				text+rodata, p.MemoryBytes, p.Name, src))
		}
		r.Host = append(r.Host, path.Join(artifact.HostDir, filepath.Base(c.hostBin)), path.Join(artifact.HostDir, filepath.Base(c.ubsan)))
	}
	if c.doca != nil {
		r.DOCA = c.doca.report
	}
	if c.doca != nil && c.doca.hostBin != "" {
		r.Host = append(r.Host, path.Join(artifact.HostDir, artifact.DOCADriverFile), path.Join(artifact.HostDir, filepath.Base(c.doca.hostBin)),
			path.Join(artifact.HostDir, filepath.Base(c.doca.ubsan)))
	}
	if c.verify != nil {
		r.Verify = c.verify.Report
	}
	if c.passed("emit") {
		var err error
		if r.Golden, err = c.goldenInfo(); err != nil {
			return nil, err
		}
	}
	if !c.passed("quantize") {
		return r, nil
	}
	switch ir := c.Policy.(type) {
	case *quantize.LSTMIR:
		c.reportLSTM(r, ir)
	case *quantize.MLPIR:
		c.reportMLP(r, ir)
	case *quantize.TreeIR:
		c.reportTrees(r, ir)
	}
	if c.passed("verify") {
		if c.Policy.StateWords() == 0 {
			f := c.verify.States.Result(c.outputWhat())
			r.Fidelity = &f
		}
		if c.Handler == artifact.HandlerRLCC {
			hf := c.verify.Decisions.Result(c.outputWhat())
			r.HandlerFidelity = &hf
		}
	}
	if c.policy != nil {
		r.PolicyAlone = &artifact.PolicyCost{WCETCycles: c.policy.WCETCycles, WCETMicros: c.policy.WCETMicros, MaxCycles: c.verify.Report.MaxPolicyCycles}
	}
	r.Teacher = c.opt.Distilled
	if c.Preds != nil {
		var fw, fl verify.ErrAcc
		missing := 0
		for i, row := range c.Rows {
			if math.IsNaN(c.Preds[i]) {
				continue
			}
			if slices.ContainsFunc(row, math.IsNaN) {
				missing++ // the firmware's inputs are integers: nothing is missing
				continue
			}
			x := quantize.QuantizeInputs(c.Policy, row)
			fw.Add(quantize.Predict(c.Policy, quantize.Y(c.Policy, x, c.Policy.Call(x, nil))) - c.Preds[i])
			fl.Add(c.Float.Eval(nil, row)[0] - c.Preds[i])
		}
		r.Tool = &artifact.ToolFidelity{File: c.opt.Predictions, Rows: fw.N, SkippedMissing: missing, Firmware: fw.Stats(), Float: fl.Stats()}
	}
	return r, nil
}

// reportTrees fills the report's tree-ensemble parts.
func (c *compilation) reportTrees(r *artifact.CompileReport, ir *quantize.TreeIR) {
	r.Model.Hash, r.Model.Trees, r.Model.Transform = ir.ModelHash, len(c.Float.Ensemble.Trees), c.Float.Ensemble.Transform.String()
	perFeature := verify.SplitsPerFeature(ir)
	for i, in := range ir.Inputs {
		r.Inputs = append(r.Inputs, artifact.InputInfo{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max,
			Lo: in.Value(in.Min), Hi: in.Value(in.Max), Resolution: in.Resolution(), Source: c.InputSources[i], Splits: perFeature[i]})
	}
	st := ir.Stats
	r.Quant = artifact.QuantInfo{AccFrac: ir.AccFrac, AccBits: ir.AccBits, OutFrac: ir.OutFrac,
		Rounding: "once, at the end, half up: (S + 2^(k-1)) >> k", Splits: st.Splits, Leaves: st.Leaves,
		MaxDepth: st.MaxDepth, Folded: len(st.Folded), ConstTrees: len(st.ConstTrees),
		LeafErr: st.LeafErr, OutErr: st.OutErr, ScoreErr: st.ScoreErr}
	if len(st.Folded) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d splits are constant over their input's range and were folded away", len(st.Folded)))
	}
}

// reportLSTM fills the report's integer-LSTM parts.
func (c *compilation) reportLSTM(r *artifact.CompileReport, ir *quantize.LSTMIR) {
	r.Model.Hash = ir.ModelHash
	for i, in := range ir.Inputs {
		r.Inputs = append(r.Inputs, artifact.InputInfo{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max,
			Lo: in.Value(in.Min), Hi: in.Value(in.Max), Resolution: in.Resolution(), Source: c.InputSources[i]})
	}
	r.Quant = artifact.QuantInfo{OutFrac: ir.OutFrac, Rounding: "gates: floor(V/2^n) with the half in the bias; cell and hidden: (v + 64) >> 7; output: (acc*M + 2^(s-1)) >> s"}
	first := 0
	if c.Handler == artifact.HandlerRLCC {
		first = nicsdk.RLCCWords
	}
	r.StateBytes += ir.StateBytes()
	r.LSTM = &artifact.LSTMInfo{Hidden: ir.Hidden, StateBytes: ir.StateBytes(), StateWords: ir.StateWords(),
		StateLayout: fmt.Sprintf("%s in words %d..%d", ir.StateSpan, first, first+ir.StateWords()-1),
		LaneBits:    quantize.LaneBits, PreMax: quantize.PreMax, SigStep: quantize.SigStep, TanhStep: quantize.TanhStep,
		CellScale: ir.CellScale, OutScale: ir.OutScale, Folded: ir.Fold != nil, OutFrac: ir.OutFrac,
		Calibration: c.Calib, CalibRows: ir.Fidelity.Rows, SeqLen: ir.SeqLen, MaxAbsDy: ir.Fidelity.MaxAbs, FlipRate: ir.Fidelity.Flips}
}

// reportMLP fills the report's integer-MLP parts.
func (c *compilation) reportMLP(r *artifact.CompileReport, ir *quantize.MLPIR) {
	q := c.Int8Quant
	r.Model.Hash = ir.ModelHash
	for i, in := range ir.Inputs {
		r.Inputs = append(r.Inputs, artifact.InputInfo{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max,
			Lo: in.Value(in.Min), Hi: in.Value(in.Max), Resolution: in.Resolution(), Source: c.InputSources[i]})
	}
	r.Quant = artifact.QuantInfo{OutFrac: ir.OutFrac, Rounding: "per layer, half up: (acc*M + 2^(s-1)) >> s"}
	info := &artifact.Int8Info{WeightBits: ir.WeightBits, ActBits: q.ActBits, ChannelScales: q.ChannelScales, Packed: q.Packed, OpenReLU: q.OpenReLU, UnitOutput: q.UnitOutput, TanhBits: q.TanhBits,
		OutFrac: ir.OutFrac, Calibration: c.Calib,
		CalibRows: ir.Fidelity.Rows, MaxAbsDy: ir.Fidelity.MaxAbs, FlipRate: ir.Fidelity.Flips, Trials: c.Int8Trials}
	if info.ActBits == 0 {
		info.ActBits = 16
	}
	if info.TanhBits == 0 {
		info.TanhBits = 16
	}
	for _, l := range ir.Layers {
		info.AccBits = append(info.AccBits, l.AccBits)
	}
	r.Int8 = info
}
