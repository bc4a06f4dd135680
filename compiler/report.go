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

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// CompileReport is what nicc compile found, as report.json holds it.
type CompileReport struct {
	// Failure is the check that failed, when one did: the report then holds what the stages
	// before it found.
	Failure *Failure  `json:"failure,omitempty"`
	Model   ModelInfo `json:"model"`
	Handler string    `json:"handler"`
	Entry   string    `json:"entry"`
	// Notes are things a user should know that are not errors.
	Notes []string `json:"notes,omitempty"`
	// Warnings are the sanity probe's (probeWarnings): the policy moves the rate the wrong
	// way in a plain situation.
	Warnings []string `json:"warnings,omitempty"`
	Out      string   `json:"out"`
	// Files are the sources written into Out (the firmware ELF, the host driver and this
	// report aside).
	Files []string `json:"files"`
	// Firmware is the RISC-V ELF in Out ("" when the build failed).
	Firmware string `json:"firmware,omitempty"`
	// Host are the host verification driver's source and its two builds (strict and UBSan),
	// by their paths in Out.
	Host   []string    `json:"host,omitempty"`
	Inputs []InputInfo `json:"inputs"`
	Params *RLCCParams `json:"rlcc_params,omitempty"`
	// Layout is how the model's inputs map onto the RL-CC handler's window (the model was
	// put in the policy's order when it was loaded); every reader of the directory reads it.
	Layout *InputLayout `json:"rlcc_layout,omitempty"`
	Quant  QuantInfo    `json:"quantization"`
	// Int8 is the integer MLP's quantization (--target int), in place of Quant's trees.
	Int8 *Int8Info `json:"int8,omitempty"`
	// LSTM is the integer LSTM's quantization (--target int on a recurrent network).
	LSTM   *LSTMInfo    `json:"lstm,omitempty"`
	Verify VerifyReport `json:"verify"`

	// Fidelity compares the firmware with the float model on the sampled float states (and
	// sample rows) of verify, in the model's output units (a probability for a binary model).
	// None for an LSTM, whose error depends on its state: see LSTM and HandlerFidelity.
	Fidelity *Fidelity `json:"fidelity,omitempty"`
	// HandlerFidelity does the same over the RL-CC handler's decisions in the event
	// sequences that start from a new or a valid flow context, on the RTT events whose o_t
	// was drawn uniformly (not aimed at a threshold or an edge). The float state is the
	// observation computed in float64 from the same RTT, base RTT and rate (o_{t-1}: the
	// previous such float observation), and the multipliers a_{t-1}, a_{t-2} the context
	// holds. For an LSTM: every decision of the sequences that start from a new flow, against
	// the float LSTM run along the same sequence with its own state on the same (quantized)
	// inputs, so all of the error is the integer network's, its drift included.
	HandlerFidelity *Fidelity `json:"fidelity_handler,omitempty"`
	// Tool compares with the source tool's own predictions on the sample rows.
	Tool *ToolFidelity `json:"fidelity_tool,omitempty"`
	// Teacher, for a network distilled into trees (compile --target trees), is the trees'
	// error against the network teacher (the float model the user trained) on the
	// distillation's states; Fidelity above is the firmware against the trees.
	Teacher *DistilledFrom `json:"fidelity_teacher,omitempty"`

	Budget *budget.Report `json:"budget,omitempty"`
	// PolicyAlone is the model's own WCET inside the RL-CC firmware.
	PolicyAlone *PolicyCost `json:"policy_alone,omitempty"`
	// DOCA is the DOCA PCC target's verification and budget (--sdk doca).
	DOCA *DOCAReport `json:"doca,omitempty"`

	// LowerBound is what any code form can do at best, as the fit stage counted it before
	// building: the budget and the core's memory were checked against it.
	LowerBound *LowerBound `json:"lower_bound"`
	// Build is the code form and the optimisation level the C was built with.
	Build BuildInfo `json:"build"`

	// Golden records what rebuilds the golden model, for nicc eval DIR (see GoldenInfo).
	Golden *GoldenInfo `json:"golden,omitempty"`
	// VectorFiles are the verify calls the budget measured, one file per entry, written beside
	// the ELF in nicc budget's vectors format: nicc budget DIR re-runs them and reproduces the
	// measured max.
	VectorFiles []VectorsInfo `json:"vector_files,omitempty"`

	CodeBytes   uint64 `json:"code_bytes"`   // .text of the ELF
	RodataBytes uint64 `json:"rodata_bytes"` // .rodata (constant tables)
	StateBytes  int    `json:"state_bytes"`  // flow context bytes the decision keeps
	StateLimit  int    `json:"state_limit_bytes"`

	// Times are the stages run, in order, with how long each took.
	Times []StageTime `json:"stage_times"`
	// Manifest lists every file the compile wrote, with its SHA-256, and its verdicts.
	Manifest *Manifest `json:"manifest"`
}

// StageTime is how long one stage of compile took.
type StageTime struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// ModelInfo names the compiled model.
type ModelInfo struct {
	File   string `json:"file"`
	Format string `json:"format"`
	Name   string `json:"name"`
	// Hash is the model IR's SHA-256 (model.Hash: nicc's canonical JSON of the model as read,
	// input names included), not the file's: the text labels it "model IR sha256". The JSON
	// name stays "sha256" (golden.go and older reports read it).
	Hash      string   `json:"sha256"`
	Inputs    []string `json:"inputs"`
	Trees     int      `json:"trees"`
	Transform string   `json:"transform"`
}

// InputInfo is one input's fixed-point format.
type InputInfo struct {
	Name       string  `json:"name"`
	Frac       int     `json:"frac"`
	Min        int32   `json:"min"`
	Max        int32   `json:"max"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Resolution float64 `json:"resolution"`
	Source     string  `json:"range_from"`
	Splits     int     `json:"splits"`
}

// RLCCParams are the RL-CC handler's parameters as compiled (Q16; rates fxp20), and the
// real numbers they stand for.
type RLCCParams struct {
	Target   uint32 `json:"target_q16"`
	Beta     uint32 `json:"beta_q16"`
	Scale    uint32 `json:"scale_q16"`
	MinRate  uint32 `json:"min_rate_fxp20"`
	InitRate uint32 `json:"init_rate_fxp20"`
	BaseRTT  uint32 `json:"base_rtt_ns,omitempty"` // 0 (absent): learned per flow

	TargetReal   float64 `json:"target"`
	BetaReal     float64 `json:"beta"`
	ScaleReal    float64 `json:"scale"`
	MinRateReal  float64 `json:"min_rate"`
	InitRateReal float64 `json:"init_rate"`

	// Sources say where each parameter came from, by its key (model.RLCCKeys): the model
	// file, a flag, the default, ... (the Source constants).
	Sources ParamSources `json:"sources,omitempty"`
}

// Int8Info summarises an integer MLP: the configuration chosen and its fidelity against the
// float teacher on the calibration set.
type Int8Info struct {
	WeightBits    int  `json:"weight_bits"`
	ActBits       int  `json:"act_bits"`
	ChannelScales bool `json:"channel_scales"`
	// Packed: hidden layers requantized by a shift, two channels to a 64-bit multiply.
	Packed bool `json:"packed,omitempty"`
	// OpenReLU: hidden relus without the upper clamp.
	OpenReLU bool `json:"open_relu,omitempty"`
	// UnitOutput: the final weights' magnitudes folded into the relu channels before them.
	UnitOutput  bool   `json:"unit_output,omitempty"`
	TanhBits    int    `json:"tanh_bits"`
	OutFrac     int    `json:"out_frac"`
	AccBits     []int  `json:"acc_bits"` // per layer
	Calibration string `json:"calibration"`
	// CalibRows, MaxAbsDy and FlipRate are quantize's fidelity on the calibration rows: max
	// |y_int − y_float| and the fraction of rows whose RL-CC direction (increase, hold,
	// decrease) differs.
	CalibRows int     `json:"calib_rows"`
	MaxAbsDy  float64 `json:"max_abs_dy"`
	FlipRate  float64 `json:"flip_rate"`
	// Trials are the configurations tried, cheapest first, when none was given: the first
	// that met the targets (else the most accurate) was chosen.
	Trials []Int8Trial `json:"trials,omitempty"`
}

// widths names the trial's configuration: "w16/a16", "w16/a16 packed".
func (t Int8Trial) widths() string {
	s := fmt.Sprintf("w%d/a%d", t.WeightBits, t.ActBits)
	if t.Packed {
		s += " packed"
	}
	if t.UnitOutput {
		s += " unit"
	}
	if t.OpenReLU {
		s += " open"
	}
	return s
}

// Int8Trial is one configuration tried and its measured fidelity on the calibration rows (or
// why quantize refused it).
type Int8Trial struct {
	WeightBits   int     `json:"weight_bits"`
	ActBits      int     `json:"act_bits"`
	Packed       bool    `json:"packed,omitempty"`
	OpenReLU     bool    `json:"open_relu,omitempty"`
	UnitOutput   bool    `json:"unit_output,omitempty"`
	MaxAbsDy     float64 `json:"max_abs_dy"`
	FlipRate     float64 `json:"flip_rate"`
	MeetsTargets bool    `json:"meets_targets"`
	Refused      string  `json:"refused,omitempty"`
}

// LSTMInfo summarises an integer LSTM: its formats, its state in the flow context, and its
// fidelity against the float teacher over the calibration sequences.
type LSTMInfo struct {
	Hidden int `json:"hidden"`
	// StateBytes are h and c at one byte each, in StateWords context words after the
	// handler's (StateLayout says which).
	StateBytes  int     `json:"state_bytes"`
	StateWords  int     `json:"state_words"`
	StateLayout string  `json:"state_layout"`
	LaneBits    int     `json:"lane_bits"`
	PreMax      int     `json:"x_t_grid_max"`
	SigStep     float64 `json:"sigmoid_step"`
	TanhStep    float64 `json:"tanh_step"`
	CellScale   float64 `json:"cell_scale"`
	OutScale    float64 `json:"out_scale"`
	// Folded is true when the output table holds the RL-CC rate multiplier (the action →
	// multiplier map folded in) rather than y.
	Folded      bool    `json:"folded_multiplier"`
	OutFrac     int     `json:"out_frac"`
	Calibration string  `json:"calibration"`
	CalibRows   int     `json:"calib_rows"`
	SeqLen      int     `json:"seq_len"`
	MaxAbsDy    float64 `json:"max_abs_dy"`
	FlipRate    float64 `json:"flip_rate"`
}

// QuantInfo summarises the integer IR.
type QuantInfo struct {
	AccFrac    int     `json:"acc_frac"`
	AccBits    int     `json:"acc_bits"`
	OutFrac    int     `json:"out_frac"`
	Rounding   string  `json:"rounding"`
	Splits     int     `json:"splits"`
	Leaves     int     `json:"leaves"`
	MaxDepth   int     `json:"max_depth"`
	Folded     int     `json:"folded_splits"`
	ConstTrees int     `json:"const_trees"`
	LeafErr    float64 `json:"leaf_err_bound"`  // score units
	OutErr     float64 `json:"out_err_bound"`   // score units
	ScoreErr   float64 `json:"score_err_bound"` // LeafErr + OutErr
}

// ErrStats are the largest absolute error and the root mean square error.
type ErrStats struct {
	MaxAbs float64 `json:"max_abs_err"`
	RMSE   float64 `json:"rmse"`
}

// Fidelity splits the firmware's error against the float model at a float state xf into
// the part the input quantization causes (float model at the quantized inputs vs at xf)
// and the part the leaves and the final rounding cause (firmware vs float model at the
// quantized inputs).
type Fidelity struct {
	What    string   `json:"what"`
	Vectors int      `json:"vectors"`
	Total   ErrStats `json:"total"`
	Inputs  ErrStats `json:"inputs"`
	Leaves  ErrStats `json:"leaves"`
	// InputDev is, per input, the largest |xf − the quantized input's value|.
	InputDev []float64 `json:"input_max_dev"`
}

// ToolFidelity compares with the source tool's own predictions.
type ToolFidelity struct {
	File string `json:"file"`
	Rows int    `json:"rows"`
	// SkippedMissing counts the rows left out because a value is missing (NaN).
	SkippedMissing int      `json:"skipped_missing"`
	Firmware       ErrStats `json:"firmware"`    // the firmware's output vs the tool's
	Float          ErrStats `json:"float_model"` // nicc's float import vs the tool's
}

// PolicyCost is the model's own WCET and measured cycles.
type PolicyCost struct {
	WCETCycles uint64  `json:"wcet_cycles"`
	WCETMicros float64 `json:"wcet_us"`
	MaxCycles  uint64  `json:"max_measured_cycles"`
}

// outputWhat names what the model's output is, for the fidelity figures.
func (c *compilation) outputWhat() string {
	switch {
	case c.handler == HandlerRLCC:
		return "policy output y (the action in [-1, 1] the handler maps to a multiplier)"
	case c.m.Ensemble != nil && c.m.Ensemble.Transform == model.TransformSigmoid:
		return "probability (the sigmoid applied in float64 to the firmware's score)"
	}
	return "score"
}

// report assembles the report of a compile whose stages all passed and writes report.json.
// Over budget, the report is returned with a *CheckError and its Failure says so.
func (c *compilation) report() (*CompileReport, error) {
	start := time.Now()
	r, err := c.assemble()
	if err != nil {
		return nil, err
	}
	var check error
	if b := r.Budget; !b.Fits {
		check = &budget.CheckError{Err: fmt.Errorf("%s is over budget on %s: WCET %d cycles = %s µs > budget %s µs",
			r.Entry, b.Core.Name, b.WCETCycles, budget.Micros(b.WCETMicros), budget.MicrosAsWritten(b.BudgetMicros))}
		r.Failure = &Failure{Stage: "budget", Kind: FailOverBudget.String(), Message: check.Error()}
	}
	if err := c.checkMemory(); err != nil { // built with --force
		if check != nil {
			err = &budget.CheckError{Err: &OverMemoryError{err.Error() + "; and " + check.Error()}}
		}
		check, r.Failure = err, failure("budget", err)
	}
	return c.writeReport(r, start, check)
}

// failed assembles the report of a compile that stage stopped with check, a *CheckError,
// from the stages that passed, and writes report.json: CI wants it most when a check fails.
func (c *compilation) failed(stage string, check error) (*CompileReport, error) {
	start := time.Now()
	r, err := c.assemble()
	if err != nil {
		return nil, fmt.Errorf("%w (%s not written: %v)", check, ReportFile, err)
	}
	r.Failure = failure(stage, c.named(check))
	return c.writeReport(r, start, check)
}

// writeReport times the report stage, writes report.json and returns r with check.
func (c *compilation) writeReport(r *CompileReport, start time.Time, check error) (*CompileReport, error) {
	c.times = append(c.times, StageTime{Stage: "report", Seconds: time.Since(start).Seconds()})
	r.Times = c.times
	var data []byte
	m, err := c.manifest(r)
	r.Manifest = m
	if err == nil {
		data, err = json.MarshalIndent(r, "", "  ")
	}
	if err == nil {
		err = writeOut(filepath.Join(c.dir, ReportFile), append(data, '\n'))
	}
	switch {
	case err != nil && check != nil:
		return r, fmt.Errorf("%w (%s not written: %v)", check, ReportFile, err)
	case err != nil:
		return nil, err
	}
	return r, check
}

// passed reports whether stage ran and passed.
func (c *compilation) passed(stage string) bool { return slices.Contains(c.passedStages, stage) }

// assemble fills the report from the stages that passed.
func (c *compilation) assemble() (*CompileReport, error) {
	r := &CompileReport{Out: c.opt.Out, Files: c.files, Budget: c.budget, StateLimit: nicsdk.CtxBytes, DOCA: c.doca.report}
	if c.m == nil {
		return r, nil
	}
	r.Model = ModelInfo{File: c.opt.Model, Format: c.format.Name, Name: c.m.Name, Inputs: c.m.Inputs}
	r.Handler, r.Entry, r.Notes = c.handler.String(), EntryPolicy, c.notes
	r.StateBytes = StateBytes(c.handler, c.layout())
	r.LowerBound, r.Build, r.VectorFiles = c.bound, c.plan, c.vectorFiles
	if c.handler == HandlerRLCC {
		r.Entry = EntryHandler
		r.Params = newRLCCParams(c.params).withSources(c.paramSrc)
		r.Layout = c.inLayout
		r.Warnings = probeWarnings(c.m, c.params)
	}
	if c.passed("emit") {
		r.Host = []string{path.Join(HostDir, "driver.c")}
	}
	if c.passed("build") {
		text, rodata, err := textBytes(c.elf)
		if err != nil {
			return nil, err
		}
		r.Firmware, r.CodeBytes, r.RodataBytes = FirmwareFile, text, rodata
		if p, err := fwsim.LookupProfile(c.opt.Core); err == nil && text+rodata > p.MemoryBytes {
			src := "nicc budget --list-cores"
			if strings.HasPrefix(p.Sources["memory_bytes"], "assumption") {
				src = "assumed; " + src
			}
			r.Notes = append(r.Notes, fmt.Sprintf("the firmware's %d bytes of code and tables are over the %d bytes of %s's memory (%s): its cycle costs assume they fit",
				text+rodata, p.MemoryBytes, p.Name, src))
		}
		r.Host = append(r.Host, path.Join(HostDir, filepath.Base(c.hostBin)), path.Join(HostDir, filepath.Base(c.ubsan)))
	}
	if c.doca.hostBin != "" {
		r.Host = append(r.Host, path.Join(HostDir, docaDriverFile), path.Join(HostDir, filepath.Base(c.doca.hostBin)),
			path.Join(HostDir, filepath.Base(c.doca.ubsan)))
	}
	if c.verify != nil {
		r.Verify = c.verify.report
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
	switch ir := c.pol.(type) {
	case *quantize.LSTMIR:
		c.reportLSTM(r, ir)
	case *quantize.MLPIR:
		c.reportMLP(r, ir)
	case *quantize.TreeIR:
		c.reportTrees(r, ir)
	}
	if c.passed("verify") {
		if c.pol.StateWords() == 0 {
			f := c.verify.states.result(c.outputWhat())
			r.Fidelity = &f
		}
		if c.handler == HandlerRLCC {
			hf := c.verify.decisions.result(c.outputWhat())
			r.HandlerFidelity = &hf
		}
	}
	if c.policy != nil {
		r.PolicyAlone = &PolicyCost{WCETCycles: c.policy.WCETCycles, WCETMicros: c.policy.WCETMicros, MaxCycles: c.verify.report.MaxPolicyCycles}
	}
	r.Teacher = c.opt.Distilled
	if c.preds != nil {
		var fw, fl errAcc
		missing := 0
		for i, row := range c.rows {
			if math.IsNaN(c.preds[i]) {
				continue
			}
			if slices.ContainsFunc(row, math.IsNaN) {
				missing++ // the firmware's inputs are integers: nothing is missing
				continue
			}
			x := quantize.QuantizeInputs(c.pol, row)
			fw.add(quantize.Predict(c.pol, quantize.Y(c.pol, x, c.pol.Call(x, nil))) - c.preds[i])
			fl.add(c.m.Eval(nil, row)[0] - c.preds[i])
		}
		r.Tool = &ToolFidelity{File: c.opt.Predictions, Rows: fw.n, SkippedMissing: missing, Firmware: fw.stats(), Float: fl.stats()}
	}
	return r, nil
}

// reportTrees fills the report's tree-ensemble parts.
func (c *compilation) reportTrees(r *CompileReport, ir *quantize.TreeIR) {
	r.Model.Hash, r.Model.Trees, r.Model.Transform = ir.ModelHash, len(c.m.Ensemble.Trees), c.m.Ensemble.Transform.String()
	perFeature := make([]int, len(ir.Inputs))
	for it := splits(ir); ; {
		s, ok := it.next()
		if !ok {
			break
		}
		perFeature[s.f]++
	}
	for i, in := range ir.Inputs {
		r.Inputs = append(r.Inputs, InputInfo{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max,
			Lo: in.Value(in.Min), Hi: in.Value(in.Max), Resolution: in.Resolution(), Source: c.inputSrc[i], Splits: perFeature[i]})
	}
	st := ir.Stats
	r.Quant = QuantInfo{AccFrac: ir.AccFrac, AccBits: ir.AccBits, OutFrac: ir.OutFrac,
		Rounding: "once, at the end, half up: (S + 2^(k-1)) >> k", Splits: st.Splits, Leaves: st.Leaves,
		MaxDepth: st.MaxDepth, Folded: len(st.Folded), ConstTrees: len(st.ConstTrees),
		LeafErr: st.LeafErr, OutErr: st.OutErr, ScoreErr: st.ScoreErr}
	if len(st.Folded) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d splits are constant over their input's range and were folded away", len(st.Folded)))
	}
}

// reportLSTM fills the report's integer-LSTM parts.
func (c *compilation) reportLSTM(r *CompileReport, ir *quantize.LSTMIR) {
	r.Model.Hash = ir.ModelHash
	for i, in := range ir.Inputs {
		r.Inputs = append(r.Inputs, InputInfo{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max,
			Lo: in.Value(in.Min), Hi: in.Value(in.Max), Resolution: in.Resolution(), Source: c.inputSrc[i]})
	}
	r.Quant = QuantInfo{OutFrac: ir.OutFrac, Rounding: "gates: floor(V/2^n) with the half in the bias; cell and hidden: (v + 64) >> 7; output: (acc*M + 2^(s-1)) >> s"}
	first := 0
	if c.handler == HandlerRLCC {
		first = nicsdk.RLCCWords
	}
	r.StateBytes += ir.StateBytes()
	r.LSTM = &LSTMInfo{Hidden: ir.Hidden, StateBytes: ir.StateBytes(), StateWords: ir.StateWords(),
		StateLayout: fmt.Sprintf("%s in words %d..%d", ir.StateSpan, first, first+ir.StateWords()-1),
		LaneBits:    quantize.LaneBits, PreMax: quantize.PreMax, SigStep: quantize.SigStep, TanhStep: quantize.TanhStep,
		CellScale: ir.CellScale, OutScale: ir.OutScale, Folded: ir.Fold != nil, OutFrac: ir.OutFrac,
		Calibration: c.calib, CalibRows: ir.Fidelity.Rows, SeqLen: ir.SeqLen, MaxAbsDy: ir.Fidelity.MaxAbs, FlipRate: ir.Fidelity.Flips}
}

// reportMLP fills the report's integer-MLP parts.
func (c *compilation) reportMLP(r *CompileReport, ir *quantize.MLPIR) {
	q := c.int8Quant
	r.Model.Hash = ir.ModelHash
	for i, in := range ir.Inputs {
		r.Inputs = append(r.Inputs, InputInfo{Name: in.Name, Frac: in.Frac, Min: in.Min, Max: in.Max,
			Lo: in.Value(in.Min), Hi: in.Value(in.Max), Resolution: in.Resolution(), Source: c.inputSrc[i]})
	}
	r.Quant = QuantInfo{OutFrac: ir.OutFrac, Rounding: "per layer, half up: (acc*M + 2^(s-1)) >> s"}
	info := &Int8Info{WeightBits: ir.WeightBits, ActBits: q.ActBits, ChannelScales: q.ChannelScales, Packed: q.Packed, OpenReLU: q.OpenReLU, UnitOutput: q.UnitOutput, TanhBits: q.TanhBits,
		OutFrac: ir.OutFrac, Calibration: c.calib,
		CalibRows: ir.Fidelity.Rows, MaxAbsDy: ir.Fidelity.MaxAbs, FlipRate: ir.Fidelity.Flips, Trials: c.int8Trials}
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

// newRLCCParams is p for a report: the fixed-point words and the real numbers they stand for.
func newRLCCParams(p nicsdk.Params) *RLCCParams {
	return &RLCCParams{Target: p.Target, Beta: p.Beta, Scale: p.Scale, MinRate: p.MinRate, InitRate: p.InitRate, BaseRTT: p.BaseRTT,
		TargetReal: float64(p.Target) / nicsdk.Q16One, BetaReal: float64(p.Beta) / nicsdk.Q16One,
		ScaleReal: float64(p.Scale) / nicsdk.Q16One, MinRateReal: float64(p.MinRate) / nicsdk.LineRate,
		InitRateReal: float64(p.InitRate) / nicsdk.LineRate}
}

// withSources is p with where each parameter came from.
func (p *RLCCParams) withSources(src ParamSources) *RLCCParams {
	p.Sources = src
	return p
}

// String is the parameters in one line, as the flags that set them would, each with where
// it came from when the report knows.
func (p *RLCCParams) String() string {
	from := func(key string) string {
		if s, ok := p.Sources[key]; ok {
			return " (" + s + ")"
		}
		return ""
	}
	if p.Sources != nil {
		base := "0 = provisioned by the host at flow start, else learned"
		if p.BaseRTT != 0 {
			base = fmt.Sprintf("%.4g µs", float64(p.BaseRTT)/1000)
		}
		return fmt.Sprintf("target %.4g%s, beta %.4g%s, scale %.4g%s, min rate %.4g%s and init rate %.4g%s of line rate, base RTT %s%s",
			p.TargetReal, from("target"), p.BetaReal, from("beta"), p.ScaleReal, from("scale"), p.MinRateReal, from("min_rate"),
			p.InitRateReal, from("init_rate"), base, from("base_rtt_us"))
	}
	s := fmt.Sprintf("target %.4g, beta %.4g, scale %.4g, min rate %.4g, init rate %.4g (of line rate)",
		p.TargetReal, p.BetaReal, p.ScaleReal, p.MinRateReal, p.InitRateReal)
	if p.BaseRTT != 0 {
		s += fmt.Sprintf(", base RTT %.4g µs", float64(p.BaseRTT)/1000)
	}
	return s
}
