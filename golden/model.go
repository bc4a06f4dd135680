package golden

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// load is the load stage (loadModel) of the model file modelFile ("" is opt.Model).
func (c *Model) Load(modelFile string) error {
	ld, notes, err := loadModel(c.Opt, modelFile)
	if ld != nil {
		c.Loaded = ld
	}
	c.Notes = append(c.Notes, notes...)
	return err
}

// loadModel is the load stage: the model file (modelFile, or opt.Model when ""), loaded for
// opt's handler, with the notes on what the handler does not do of it. On an error past
// reading the model, the model loaded so far comes with it.
func loadModel(opt Options, modelFile string) (*Loaded, []string, error) {
	lp, err := LoadPolicy(cmp.Or(modelFile, opt.Model), opt.Format, opt.Inputs, opt.Handler, "compile it with --handler none, or ")
	if err != nil {
		return nil, nil, err
	}
	m, h := lp.Model, lp.Handler
	ld := &Loaded{Float: m, Format: lp.Format, InLayout: lp.Layout}
	if ld.Params, ld.ParamSources, err = ResolveParams(cmp.Or(modelFile, opt.Model), m, opt.Params, opt.ParamSources); err != nil {
		return ld, nil, err
	}
	if !h.Valid() {
		return ld, nil, fmt.Errorf("unknown handler %d", int(h))
	}
	ld.Handler = h
	if opt.DOCA && h != artifact.HandlerRLCC {
		return ld, nil, fmt.Errorf("--sdk doca needs the RL-CC handler (the DOCA entry is RL-CC's event handler)")
	}
	var notes []string
	if lp.Note != "" {
		notes = append(notes, lp.Note)
	}
	if h == artifact.HandlerRLCC && m.Ensemble != nil && m.Ensemble.Transform != model.TransformIdentity {
		notes = append(notes, fmt.Sprintf("the model's %s is not applied: the handler maps the raw score y to the multiplier", m.Ensemble.Transform))
	}
	if err := checkState(opt.Model, m, h, ld.Layout()); err != nil {
		return ld, notes, err
	}
	if opt.Int8 != nil {
		switch m.Kind() {
		case model.KindLSTM:
			if opt.Predictions != "" {
				return ld, notes, fmt.Errorf("%s: --predictions compares one-step outputs, which a recurrent model does not have; leave it out for an LSTM", opt.Model)
			}
		case model.KindTrees:
			return ld, notes, fmt.Errorf("%s: model %s is a tree ensemble; --target int takes a dense network", opt.Model, m.Name)
		}
		return ld, notes, nil
	}
	if k := m.Kind(); k != model.KindTrees {
		return ld, notes, fmt.Errorf("%s: model %s is an %s network; nicc compile takes tree ensembles: quantize a dense network with --target int, or distill it into trees (--target trees)",
			opt.Model, m.Name, k)
	}
	return ld, notes, nil
}

// StateBytes is the flow context the handler's decision keeps per flow feeding layout l: its
// words, and the older states of l beyond the default's.
func StateBytes(h artifact.Handler, l nicsdk.Layout) int {
	if h == artifact.HandlerRLCC {
		return nicsdk.RLCCBytes + 4*l.ExtraWords()
	}
	return 0
}

// checkState refuses a decision whose per-flow state cannot fit the engine's 48-byte
// context: the handler's words, plus a recurrent model's h and c at one byte each (int8,
// the narrowest nicc would ever keep them).
func checkState(path string, m *model.Model, h artifact.Handler, l nicsdk.Layout) error {
	bytes := StateBytes(h, l)
	what := fmt.Sprintf("the %s handler's %d", h, bytes)
	for _, l := range m.Layers {
		if l.Op == model.OpLSTM {
			bytes += 2 * l.Out
			what += fmt.Sprintf(" + h and c of %d values each at int8 (%d)", l.Out, 2*l.Out)
		}
	}
	if bytes > nicsdk.CtxBytes {
		return fmt.Errorf("%s: model %s needs %d bytes of flow state (%s), over the engine's %d-byte flow context",
			path, m.Name, bytes, what, nicsdk.CtxBytes)
	}
	return nil
}

// quantize picks each input's fixed-point format and turns the ensemble into the integer IR.
//
// RL-CC: the formats are the handler's declared Q16 grid (rlcc.Grid). A split
// on o or o_prev above the handler's clamp of the observation (128) cannot be represented and
// is refused; splits outside a range the float feature cannot leave either are folded.
//
// None: each feature's range is the hull of its thresholds and, with Ranges, of its sample
// column, widened by 1/64 of its span (at least 1/1024 of its magnitude) so that every
// threshold lies strictly inside. A caller clamps inputs to these ranges, which changes no
// branch. Two distinct thresholds of one feature that the chosen format cannot tell apart
// are refused.
func (c *Model) Quantize() error {
	m := c.Float
	n := m.NumInputs()
	var inputs []quantize.Input
	if err := c.readRows(); err != nil {
		return err
	}
	if c.Opt.Int8 != nil {
		return c.QuantizeInt8()
	}
	switch c.Handler {
	case artifact.HandlerRLCC:
		inputs = c.rlccInputs()
		if err := quantize.CheckClampedSplits(m, inputs, rlcc.Clamped(c.Layout())); err != nil {
			return fmt.Errorf("%s: %w", c.Opt.Model, err)
		}
	default:
		lo, hi, src := quantize.TreeRanges(m, c.Rows)
		c.InputSources = src
		var err error
		if inputs, err = quantize.ChooseInputs(m.Inputs, lo, hi); err != nil {
			return fmt.Errorf("%s: %w", c.Opt.Model, err)
		}
		if err := quantize.CheckResolution(m, inputs); err != nil {
			return fmt.Errorf("%s: %w", c.Opt.Model, err)
		}
	}
	if len(inputs) != n {
		return fmt.Errorf("internal error: %d input formats for %d inputs", len(inputs), n)
	}
	ir, err := quantize.Trees(m, inputs, quantize.TreeOptions{OutFrac: quantize.DefaultOutFrac})
	if err != nil {
		return fmt.Errorf("%s: %w", c.Opt.Model, err)
	}
	c.Policy = ir
	return nil
}

// readRows reads the Ranges rows and the source tool's Predictions on them.
func (c *Model) readRows() error {
	if c.Opt.Ranges == "" {
		if c.Opt.Predictions != "" {
			return fmt.Errorf("predictions %s need the rows they were made on (--ranges)", c.Opt.Predictions)
		}
		return nil
	}
	rows, err := model.ReadCSVFile(c.Opt.Ranges)
	if err != nil {
		return err
	}
	n := c.Float.NumInputs()
	data := rows.Data
	if w := len(data[0]); w == n+1 && c.Opt.Predictions == c.Opt.Ranges && !NamesAll(rows.Names, c.Float.Inputs) {
		// A reference table read as both: the inputs, then the tool's output.
		for r, row := range data {
			data[r] = row[:n]
		}
	} else if w != n {
		if rows.Names == nil || w < n {
			return fmt.Errorf("%s: rows have %d values; model %s takes %d inputs", c.Opt.Ranges, w, c.Float.Name, n)
		}
		// A header naming every model input selects the columns.
		idx := make([]int, n)
		for i, name := range c.Float.Inputs {
			j := slices.Index(rows.Names, name)
			if j < 0 {
				return fmt.Errorf("%s: rows have %d values and no column %q; model %s takes %d inputs", c.Opt.Ranges, w, name, c.Float.Name, n)
			}
			idx[i] = j
		}
		for r, row := range data {
			sel := make([]float64, n)
			for i, j := range idx {
				sel[i] = row[j]
			}
			data[r] = sel
		}
	}
	for r, row := range data {
		for i, v := range row {
			if math.IsInf(v, 0) {
				return fmt.Errorf("%s: row %d: %s is %v: a range must be finite", c.Opt.Ranges, r+1, c.Float.Inputs[i], v)
			}
		}
	}
	c.Rows = data
	if c.Opt.Predictions == "" {
		return nil
	}
	preds, err := model.ReadCSVFile(c.Opt.Predictions)
	if err != nil {
		return err
	}
	if len(preds.Data) != len(data) {
		return fmt.Errorf("%s: %d rows; want one prediction for each of the %d rows of %s",
			c.Opt.Predictions, len(preds.Data), len(data), c.Opt.Ranges)
	}
	// One value a row, or a reference table whose last column is the tool's output.
	for _, p := range preds.Data {
		c.Preds = append(c.Preds, p[len(p)-1])
	}
	return nil
}

// namesAll reports whether header names every one of inputs.
func NamesAll(header, inputs []string) bool {
	for _, in := range inputs {
		if !slices.Contains(header, in) {
			return false
		}
	}
	return header != nil
}

// layout is the window the RL-CC handler feeds this compile's policy: the layout its
// inputs' names form (--inputs, --history, --features; load's InputLayout), else the default,
// x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}).
func (ld *Loaded) Layout() nicsdk.Layout {
	if ld.InLayout == nil {
		return nicsdk.DefaultLayout
	}
	return ld.InLayout.Layout()
}

// CheckLayout refuses a layout the handler cannot feed beside the policy's state words (an
// LSTM keeps some in the same six context words as the layout's older states), and another
// layout than the default for the DOCA program, whose runtime (rlcc_doca.h and its Go twin
// nicsdk.DOCARuntime) feeds the default one.
func (c *Model) CheckLayout() error {
	l := c.Layout()
	if err := l.Check(c.Policy.StateWords()); err != nil {
		return fmt.Errorf("%s: %w", c.Opt.Model, err)
	}
	if c.Opt.DOCA && !l.IsDefault() {
		return fmt.Errorf("%s: the DOCA program feeds the default input layout (%v), not %v", c.Opt.Model, nicsdk.DefaultLayout, l)
	}
	return nil
}

// goldenOptions are what the load and quantize stages read of the options.
type Options struct {
	Model        string            // the model file
	Format       *model.FileFormat // nil detects it
	Inputs       []string          // rename the model's inputs (nil keeps its own)
	Handler      artifact.Handler
	Params       nicsdk.Params
	ParamSources artifact.ParamSources
	// DOCA is the DOCA target (SDKDOCA): its program feeds the RL-CC handler the default
	// layout only.
	DOCA                bool
	Ranges, Predictions string
	Int8                *Int8Options
	Seed                uint64
}

// golden is what the load and quantize stages make of the model under opt: the model loaded
// (loaded) and its integer policy (quantized), the golden model a compile verifies its
// firmware against and OpenCompiled rebuilds, with the notes they make for the report.
type Model struct {
	Opt Options
	*Loaded
	*Quantized
	Notes []string
}

// newGolden is a golden model under opt, not loaded yet.
func New(opt Options) *Model {
	return &Model{Opt: opt, Loaded: &Loaded{}, Quantized: &Quantized{}}
}

// loaded is the load stage's artifact: the model, in the policy's order, and what runs it.
type Loaded struct {
	Float   *model.Model
	Format  *model.FileFormat
	Handler artifact.Handler
	// inLayout is how the model's inputs map onto the RL-CC handler's window (HandlerRLCC):
	// load put m in the policy's order.
	InLayout     *artifact.InputLayout
	Params       nicsdk.Params
	ParamSources artifact.ParamSources // where each of params came from
}

// quantized is the quantize stage's artifact: the integer policy and the rows it was made on.
type Quantized struct {
	Policy       quantize.Policy      // the integer policy: a *TreeIR, *MLPIR or *LSTMIR
	Calib        string               // where the Int8 calibration rows came from
	CalibSet     [][]float64          // the Int8 calibration rows, once read (calibRows)
	Int8Quant    quantize.MLPOptions  // the configuration chosen
	Int8Trials   []artifact.Int8Trial // the configurations tried when none was given
	InputSources []string             // where each input's range came from
	Rows         [][]float64          // the Ranges rows
	Preds        []float64            // the source tool's Predictions on them
}
