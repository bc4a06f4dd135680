package diff

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/student"
	"github.com/nicc-dev/nicc/termtext"
)

// What nicc diff compares the teacher against (DiffOptions.Against); anything else is a
// student model file.
const (
	AgainstInt   = "int"   // the integer network compile --target int builds
	AgainstInt8  = "int8"  // the former name of AgainstInt, still accepted
	AgainstTrees = "trees" // the tree student compile --target trees distills, as its integer IR
)

// DiffOptions say what nicc diff compares.
type DiffOptions struct {
	Teacher string            // the float teacher's model file
	Format  *model.FileFormat // its format; nil detects it
	// Inputs rename the teacher's inputs after loading (nil keeps its own): see golden.LoadModelAs.
	Inputs []string
	// Handler says whether the teacher is an RL-CC policy, whose states can be sampled;
	// HandlerAuto decides by the input names as compile does.
	Handler artifact.Handler
	// Params are the RL-CC parameters: the sampler's T = target·scale, the handler's input
	// ranges; those ParamSources names over the teacher file's over the defaults (see
	// compiler.CompileOptions.Params).
	Params       nicsdk.Params
	ParamSources artifact.ParamSources
	// Against is AgainstInt (or AgainstInt8), AgainstTrees, or a student model file; "" is
	// AgainstInt.
	Against string
	// Calib is a CSV of rows to compare on (one value per teacher input, or a header naming
	// every input); "" draws Samples RL-CC states (under Params, seeded by Seed), which needs
	// the RL-CC handler.
	Calib   string
	Samples int // 0 is DefaultCalibSamples
	Seed    uint64
	// Quant are the int8 options (the zero value chooses by the measured error, as compile does).
	Quant quantize.MLPOptions
	// Distill are the options of the trees student (Teacher, Format and Seed are filled in);
	// the trainer's options are DefaultTrain's but for a nonzero Train.Trees and Train.Depth;
	// zero HeldOut is 0.1, zero Samples DefaultSamples.
	Distill student.DistillOptions
	// Out is the directory lab.Diff draws the plots into; "" draws none. Diff itself draws
	// nothing (diff never imports plot).
	Out string
}

// DiffStats are the student's errors against the teacher over the comparison rows.
type DiffStats struct {
	Rows   int     `json:"rows"`
	MaxAbs float64 `json:"max_abs_err"`
	RMSE   float64 `json:"rmse"`
	P50    float64 `json:"p50_abs_err"`
	P90    float64 `json:"p90_abs_err"`
	P99    float64 `json:"p99_abs_err"`
	P999   float64 `json:"p999_abs_err"`
	// Flips is how many rows differ in direction (increase, decrease, hold within ±0.5%)
	// under the RL-CC multiplier map; FlipRate the fraction.
	Flips    int     `json:"direction_flips"`
	FlipRate float64 `json:"direction_flip_rate"`
}

// LayerTrace is one layer of the float network against the dequantized integer one (for
// an LSTM, one value of the cell: x_t, a gate, c', h', y).
type LayerTrace struct {
	Layer  int     `json:"layer"`
	Name   string  `json:"name,omitempty"`
	Act    string  `json:"activation"`
	Units  int     `json:"units"`
	Bits   int     `json:"bits"` // the integer layer's output grid
	MaxAbs float64 `json:"max_abs_err"`
	RMSE   float64 `json:"rmse"`
}

// DiffReport is what nicc diff found.
type DiffReport struct {
	Teacher     string       `json:"teacher"`
	TeacherKind string       `json:"teacher_kind"`
	Against     string       `json:"against"`
	Student     string       `json:"student"` // what the teacher was compared with
	Calib       string       `json:"calib"`   // where the rows came from
	Stats       DiffStats    `json:"stats"`
	Trace       []LayerTrace `json:"trace,omitempty"`
	Notes       []string     `json:"notes,omitempty"`
	Plots       []string     `json:"plots,omitempty"`
	// Params are the RL-CC parameters, for an RL-CC teacher.
	Params *artifact.RLCCParams `json:"rlcc_params,omitempty"`
	// Warnings are the sanity probe's on an RL-CC teacher (golden.ProbeWarnings).
	Warnings []string `json:"warnings,omitempty"`

	// Figures are what lab.Diff draws the figures from (not part of the JSON).
	Figures Figures `json:"-"`
}

// Figures are what an open-loop diff's figures are drawn from (lab.Diff): the teacher and
// the student as functions of a float row, and Δy over the comparison rows.
type Figures struct {
	RLCC             bool                      // the teacher takes an RL-CC window (heatmaps)
	Teacher, Student func(x []float64) float64 // y at a float row
	// Repr is a row as an integer student sees it: quantized to its input formats, clamped
	// to their ranges (nil for a float student).
	Repr     func(x []float64) []float64
	Sampler  rlcc.Sampler  // the RL-CC state ranges under the parameters (heatmaps)
	Layout   nicsdk.Layout // the window the heatmaps' states fill
	Headline string        // the student in a few words with its widths (plot titles)
	DY       []float64     // student − teacher, per row, sorted by |Δy|
}

// differ is one comparison: the teacher, the rows, the student as a function of a float row.
type differ struct {
	opt DiffOptions
	c   *golden.Model // the teacher, the handler, the calibration rows: compile's load and quantize stages
	// rows are the comparison rows when they are in memory: a --calib CSV, or the sampled
	// states int8 calibrates on. Otherwise (nil) the n sampled states are streamed (each).
	rows [][]float64
	n    int
	rep  *DiffReport
	mlp  *quantize.MLPIR  // AgainstInt of a dense network
	lstm *quantize.LSTMIR // AgainstInt of an LSTM
}

// Diff compares the teacher with its integer network (int8), its distilled trees, or a
// student file, over the calibration rows. Bad input (an unreadable model, a calibration set
// of the wrong width, a comparison the teacher's kind does not support) is an error.
func Diff(opt DiffOptions) (*DiffReport, error) {
	if opt.Against == "" || opt.Against == AgainstInt8 {
		opt.Against = AgainstInt
	}
	if opt.Samples < 0 {
		return nil, fmt.Errorf("samples %d: want a positive count", opt.Samples)
	}
	if opt.Against != AgainstInt && opt.Against != AgainstTrees {
		if _, err := os.Stat(opt.Against); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--against %q: want %s (or %s), %s, or a student model file, and there is no file %s", opt.Against, AgainstInt, AgainstInt8, AgainstTrees, opt.Against)
		}
	}
	q := opt.Quant
	d := &differ{opt: opt, c: golden.New(golden.Options{Model: opt.Teacher, Format: opt.Format, Inputs: opt.Inputs, Handler: opt.Handler, Params: opt.Params,
		ParamSources: opt.ParamSources, Seed: opt.Seed, Int8: &golden.Int8Options{Calib: opt.Calib, Samples: opt.Samples, Quant: q}})}
	if err := d.load(); err != nil {
		return nil, err
	}
	var warnings []string
	if d.c.Handler == artifact.HandlerRLCC {
		warnings = golden.ProbeWarnings(d.c.Float, d.c.Params)
	}
	if err := d.source(); err != nil {
		return nil, err
	}
	var err error
	switch opt.Against {
	case AgainstInt:
		err = d.int8()
	case AgainstTrees:
		err = d.trees()
	default:
		err = d.file()
	}
	if err != nil {
		return nil, err
	}
	if err := d.measure(); err != nil {
		return nil, err
	}
	switch {
	case d.mlp != nil:
		d.trace()
	case d.lstm != nil:
		d.traceLSTM()
	}
	d.rep.Warnings = warnings
	return d.rep, nil
}

// load reads the teacher and picks the handler as compile does; int8 goes through compile's
// own load (which refuses tree ensembles).
func (d *differ) load() error {
	c := d.c
	if d.opt.Against == AgainstInt {
		if err := c.Load(""); err != nil {
			if c.Float != nil && c.Float.Kind() == model.KindTrees {
				return fmt.Errorf("%s: model %s is a tree ensemble, and diff --against int (the default) needs a neural teacher (a dense or LSTM network) to quantize; to compare tree models, give the other one with --against FILE",
					d.opt.Teacher, c.Float.Name)
			}
			return err
		}
	} else {
		lp, err := golden.LoadPolicy(d.opt.Teacher, d.opt.Format, d.opt.Inputs, d.opt.Handler, "diff it with --handler none, or ")
		if err != nil {
			return err
		}
		c.Float, c.Format, c.Handler, c.InLayout = lp.Model, lp.Format, lp.Handler, lp.Layout
		if c.Params, c.ParamSources, err = golden.ResolveParams(d.opt.Teacher, lp.Model, d.opt.Params, d.opt.ParamSources); err != nil {
			return err
		}
	}
	if n := c.Float.NumOutputs(); n != 1 {
		return fmt.Errorf("%s: teacher %s has %d outputs; diff takes a single-output policy", d.opt.Teacher, c.Float.Name, n)
	}
	m := c.Float
	d.rep = &DiffReport{Teacher: d.opt.Teacher, TeacherKind: m.Kind().String(), Against: d.opt.Against}
	d.rep.Figures.RLCC = c.Handler == artifact.HandlerRLCC
	d.rep.Figures.Sampler, d.rep.Figures.Layout = rlcc.SamplerFor(c.Params), c.Layout()
	if d.rep.Figures.RLCC {
		d.rep.Params = artifact.NewRLCCParams(c.Params).WithSources(c.ParamSources)
	}
	d.rep.Figures.Teacher = func(x []float64) float64 { return m.Eval(m.NewState(), x)[0] }
	if m.Kind() == model.KindLSTM && d.opt.Against != AgainstInt {
		// Against int the rows run as sequences (int8 says so).
		d.rep.Notes = append(d.rep.Notes, "LSTM: every row is evaluated from a zero recurrent state")
	}
	return nil
}

// source chooses the rows: those int8 calibrates on, or a --calib CSV, are read; sampled
// states compared with trees or a file are streamed, so memory does not grow with them.
func (d *differ) source() error {
	if d.opt.Against == AgainstInt || d.opt.Calib != "" {
		rows, err := d.c.CalibRows()
		if err != nil {
			return err
		}
		d.rows, d.n = rows, len(rows)
	} else {
		n, _, err := d.c.CalibStream()
		if err != nil {
			return err
		}
		d.n = n
	}
	d.rep.Calib = d.c.Calib
	return nil
}

// each calls fn on every row in order: k is its index; fn must not keep row (a streamed
// row's slice is reused).
func (d *differ) each(fn func(k int, row []float64)) error {
	if d.rows != nil {
		for k, row := range d.rows {
			fn(k, row)
		}
		return nil
	}
	_, next, err := d.c.CalibStream()
	if err != nil {
		return err
	}
	row := make([]float64, d.c.Float.NumInputs())
	for k := range d.n {
		next(row)
		fn(k, row)
	}
	return nil
}

// int8 quantizes the teacher exactly as compile --target int does.
func (d *differ) int8() error {
	if err := d.c.QuantizeInt8(); err != nil {
		return err
	}
	if ir, ok := d.c.Policy.(*quantize.LSTMIR); ok {
		d.int8LSTM(ir)
		return nil
	}
	ir := d.c.Policy.(*quantize.MLPIR)
	d.mlp = ir
	q := d.c.Int8Quant
	d.rep.Figures.Headline = "integer network " + artifact.MLPWidths(ir.WeightBits, q.ActBits, q.ChannelScales, q.Packed, q.UnitOutput)
	d.rep.Student = fmt.Sprintf("%s (weights int%d, hidden activations int%d), calibrated on %s",
		d.rep.Figures.Headline, ir.WeightBits, cmp.Or(q.ActBits, 16), d.c.Calib)
	d.setInteger(ir.Inputs, func(raw []int32) float64 { return ir.OutValue(ir.Eval(raw)) })
	return nil
}

// int8LSTM compares the integer LSTM compile --target int builds. The statistics and the
// trace run the rows as sequences of SeqLen steps from the zero state, float and integer
// each with its own state, as quantize measures its fidelity; the heatmaps' functions of one
// row are one step from the zero state.
func (d *differ) int8LSTM(ir *quantize.LSTMIR) {
	d.lstm = ir
	d.rep.Figures.Headline = fmt.Sprintf("integer LSTM: x_t %d-bit, h int8, c a μ-law byte, y on a %d-entry grid", bits.Len(uint(quantize.PreMax)), 2*quantize.OutHalf)
	d.rep.Student = fmt.Sprintf("integer LSTM (x_t in [0, %d], gates by 256-entry tables, h int8 and c a byte on a μ-law grid (μ %g, ±%.3g) in %d context words, output on a %d-entry grid in Q%d) calibrated on %s",
		quantize.PreMax, ir.CellMu, ir.CellMax, ir.StateWords(), 2*quantize.OutHalf, ir.OutFrac, d.c.Calib)
	d.rep.Notes = append(d.rep.Notes, fmt.Sprintf("LSTM: the rows run as sequences of %d steps from the zero recurrent state, float and integer each carrying its own state (as quantize measures its fidelity)", ir.SeqLen))
	d.setInteger(ir.Inputs, func(raw []int32) float64 {
		return ir.OutValue(ir.Step(raw, make([]uint32, ir.StateWords())))
	})
}

// trees distills the teacher as compile --target trees does and compares its integer IR.
func (d *differ) trees() error {
	o := d.opt.Distill
	o.Teacher, o.Format, o.Seed = d.opt.Teacher, d.opt.Format, d.opt.Seed
	o.Inputs, o.Handler, o.Params, o.ParamSources = d.opt.Inputs, d.c.Handler, d.c.Params, d.c.ParamSources
	train := student.DefaultTrain
	if o.Train.Trees != 0 {
		train.Trees = o.Train.Trees
	}
	if o.Train.Depth != 0 {
		train.Depth = o.Train.Depth
	}
	o.Train = train
	if o.HeldOut == 0 {
		o.HeldOut = 0.1
	}
	r, err := student.Distill(o, "")
	if err != nil {
		return err
	}
	return d.treeStudent(r.Model, fmt.Sprintf("%d trees of depth %d", r.Trees, r.Depth),
		fmt.Sprintf("distilled on %d states (%s, grid %s)", r.Samples, r.States, r.Grid))
}

// file compares a student model file: a tree ensemble as its integer IR, a network in float.
func (d *differ) file() error {
	s, _, err := golden.LoadModel(d.opt.Against, nil)
	if err != nil {
		return err
	}
	if s.NumInputs() != d.c.Float.NumInputs() || s.NumOutputs() != 1 {
		return fmt.Errorf("%s: student %s takes %d inputs and gives %d outputs; teacher %s takes %d inputs and gives 1",
			d.opt.Against, s.Name, s.NumInputs(), s.NumOutputs(), d.c.Float.Name, d.c.Float.NumInputs())
	}
	if s.Ensemble != nil {
		return d.treeStudent(s, fmt.Sprintf("tree ensemble %s", s.Name), fmt.Sprintf("(%s)", d.opt.Against))
	}
	d.rep.Figures.Headline = fmt.Sprintf("%s network %s, float", s.Kind(), s.Name)
	d.rep.Student = fmt.Sprintf("%s (%s)", d.rep.Figures.Headline, d.opt.Against)
	d.rep.Figures.Student = func(x []float64) float64 { return s.Eval(s.NewState(), x)[0] }
	return nil
}

// treeStudent compares s (its name, and where it came from) as its integer IR on the RL-CC
// grid when its inputs are the RL-CC layout, in float otherwise.
func (d *differ) treeStudent(s *model.Model, name, from string) error {
	if !golden.InDefaultOrder(s.Inputs) && !d.rep.Figures.RLCC {
		d.rep.Figures.Headline = name + ", float"
		d.rep.Student = name + " " + from + ", in float (inputs not in the RL-CC layout)"
		d.rep.Figures.Student = func(x []float64) float64 { return s.Ensemble.Eval(x) }
		return nil
	}
	ir, err := quantize.Trees(s, quantize.GridInputs(rlcc.Grid(d.c.Params, d.c.Layout())), quantize.TreeOptions{OutFrac: quantize.DefaultOutFrac})
	if err != nil {
		return fmt.Errorf("%s: %w", d.opt.Against, err)
	}
	d.rep.Figures.Headline = fmt.Sprintf("%s, integer (Q16 inputs, Q%d output)", name, ir.OutFrac)
	d.rep.Student = fmt.Sprintf("%s %s, as its integer IR on the RL-CC Q16 grid (Q%d output)", name, from, ir.OutFrac)
	d.setInteger(ir.Inputs, func(raw []int32) float64 { return ir.Predict(ir.Eval(raw)) })
	return nil
}

// setInteger makes the student an integer evaluator of the row quantized to its formats.
func (d *differ) setInteger(inputs []quantize.Input, eval func([]int32) float64) {
	d.rep.Figures.Repr = func(x []float64) []float64 {
		v := make([]float64, len(x))
		for i, in := range inputs {
			v[i] = in.Value(in.Quantize(x[i]))
		}
		return v
	}
	d.rep.Figures.Student = func(x []float64) float64 {
		raw := make([]int32, len(inputs))
		for i, in := range inputs {
			raw[i] = in.Quantize(x[i])
		}
		return eval(raw)
	}
}

// measure fills the statistics: the student against the float teacher at the same input.
// An integer student's input is the row quantized to its formats and clamped to their
// ranges (the RL-CC handler clamps multipliers to [0.8333, 1.2], below the sampler's 0.8),
// so the teacher is evaluated there too: the error is the student's alone. Of each row it
// keeps Δy alone (8 bytes), for the exact percentiles and the histogram.
func (d *differ) measure() error {
	r := d.rep
	n := d.n
	dy := make([]float64, n)
	r.Figures.DY = dy
	st := &r.Stats
	st.Rows = n
	var sum float64
	clamped := 0
	next := d.pair()
	err := d.each(func(k int, row []float64) {
		x := row
		if r.Figures.Repr != nil {
			x = r.Figures.Repr(row)
			for i := range x {
				if math.Abs(x[i]-row[i]) > 1e-3 {
					clamped++
					break
				}
			}
		}
		yt, ys := next(k, row, x)
		e := ys - yt
		dy[k] = e
		sum += e * e
		st.MaxAbs = max(st.MaxAbs, math.Abs(e))
		if rlcc.DirectionOf(ys) != rlcc.DirectionOf(yt) {
			st.Flips++
		}
	})
	if err != nil {
		return err
	}
	if clamped > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d of %d rows lie outside the integer student's input ranges and are compared clamped to them, as the firmware sees them", clamped, n))
	}
	if n == 0 {
		return nil
	}
	st.RMSE = math.Sqrt(sum / float64(n))
	st.FlipRate = float64(st.Flips) / float64(n)
	// Sorted by |Δy| in place: the histogram counts the same values in any order.
	slices.SortFunc(dy, func(a, b float64) int { return cmp.Compare(math.Abs(a), math.Abs(b)) })
	st.P50, st.P90, st.P99, st.P999 = absPercentile(dy, 0.5), absPercentile(dy, 0.9), absPercentile(dy, 0.99), absPercentile(dy, 0.999)
	return nil
}

// pair is the teacher's and the student's output at row k (x is the row as the student sees
// it). An integer LSTM and the float teacher step through the rows as sequences of SeqLen
// from the zero state, each with its own state (quantize.LSTMIR.Runner, as its fidelity does).
func (d *differ) pair() func(k int, row, x []float64) (yt, ys float64) {
	r := d.rep
	ir := d.lstm
	if ir == nil {
		return func(_ int, row, x []float64) (float64, float64) { return r.Figures.Teacher(x), r.Figures.Student(row) }
	}
	run := ir.Runner(d.c.Float)
	return func(k int, row, _ []float64) (float64, float64) {
		yi, yf := run(k, row)
		return yf, yi
	}
}

// absPercentile is the nearest-rank p-quantile of |v| over values sorted by |v|.
func absPercentile(sorted []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return math.Abs(sorted[min(max(k, 0), len(sorted)-1)])
}

// trace compares each layer's float activations with the integer network's, dequantized
// (quantize.MLPIR.EvalTrace; the next layer's InStep is what one step of a hidden layer's
// output is worth).
func (d *differ) trace() {
	ir, m := d.mlp, d.c.Float
	L := len(ir.Layers)
	sq := make([]float64, L)
	mx := make([]float64, L)
	cnt := make([]int, L)
	raw := make([]int32, len(ir.Inputs))
	for _, row := range d.rows {
		x := d.rep.Figures.Repr(row)
		for i, in := range ir.Inputs {
			raw[i] = in.Quantize(row[i])
		}
		yInt, hidden := ir.EvalTrace(raw)
		for k := range ir.Layers {
			fl := &m.Layers[k]
			y := make([]float64, fl.Out)
			for j := range fl.Out {
				s := 0.0
				if fl.B != nil {
					s = fl.B[j]
				}
				for i, w := range fl.W[j] {
					s += w * x[i]
				}
				switch fl.Act {
				case model.ActReLU:
					y[j] = max(s, 0)
				case model.ActTanh:
					y[j] = math.Tanh(s)
				default:
					y[j] = s
				}
			}
			deq := []float64{ir.OutValue(yInt)}
			if k < L-1 {
				deq = make([]float64, fl.Out)
				for j, v := range hidden[k] {
					deq[j] = float64(v) * ir.Layers[k+1].InStep[j]
				}
			}
			for j := range y {
				if k == L-2 && d.c.Int8Quant.UnitOutput {
					// The channel holds the teacher's times its final weight's magnitude
					// (quantize.MLPOptions.UnitOutput); with a zero weight it is not computed.
					c := math.Abs(m.Layers[L-1].W[0][j])
					if c == 0 {
						continue
					}
					deq[j] /= c
				}
				e := deq[j] - y[j]
				sq[k] += e * e
				mx[k] = max(mx[k], math.Abs(e))
				cnt[k]++
			}
			x = y
		}
	}
	for k := range ir.Layers {
		l := &ir.Layers[k]
		t := LayerTrace{Layer: k, Name: fmt.Sprintf("h%d", k+1), Act: l.Act.String(), Units: l.Out, Bits: l.Bits, MaxAbs: mx[k]}
		if l.Final {
			t.Name, t.Bits = "y", 32 // Q(OutFrac)
		}
		if cnt[k] > 0 {
			t.RMSE = math.Sqrt(sq[k] / float64(cnt[k]))
		}
		d.rep.Trace = append(d.rep.Trace, t)
	}
}

// lstmFloat is one float step of dense(relu) → LSTM → dense(tanh) with its internals for the
// trace: x_t, the activated gates (i, f, g, o) and y; h and c advance in place.
func lstmFloat(m *model.Model, x, h, c []float64) (xt, gates []float64, y float64) {
	pre, cell, post := &m.Layers[0], &m.Layers[1], &m.Layers[2]
	xt = pre.Dense(x)
	hn, gates := cell.LSTMStep(&model.State{H: h, C: c}, xt)
	return xt, gates, post.Dense(hn)[0]
}

// traceLSTM compares the float LSTM's values with the integer one's, dequantized, along the
// same sequences the statistics run (SeqLen steps from the zero state, each side with its
// own state): x_t (PreScale per step), the gates i, f, o (Sigmoid/128) and g (GTable in
// CellScale units), c' (its code's value, LSTMIR.CellValue), h' (1/127) and y. The integer values are
// LSTMIR.StepTrace's; its output and state must equal LSTMIR.Step's, run beside it.
func (d *differ) traceLSTM() {
	ir, m := d.lstm, d.c.Float
	H := ir.Hidden
	type acc struct {
		name, act string
		layer     int
		units     int
		bits      int
		sq, mx    float64
		n         int
	}
	preBits := 0
	for v := quantize.PreMax; v > 0; v >>= 1 {
		preBits++
	}
	vals := []*acc{
		{name: "x_t", act: "relu", layer: 0, units: ir.Pre.Out, bits: preBits},
		{name: "i", act: "sigmoid", layer: 1, units: H, bits: 8},
		{name: "f", act: "sigmoid", layer: 1, units: H, bits: 8},
		{name: "g", act: "tanh", layer: 1, units: H, bits: 8},
		{name: "o", act: "sigmoid", layer: 1, units: H, bits: 8},
		{name: "c'", act: "identity", layer: 1, units: H, bits: 8},
		{name: "h'", act: "tanh", layer: 1, units: H, bits: 8},
		{name: "y", act: "tanh", layer: 2, units: 1, bits: 8},
	}
	add := func(a *acc, deq, fl float64) {
		e := deq - fl
		a.sq += e * e
		a.mx = max(a.mx, math.Abs(e))
		a.n++
	}
	h, c := make([]float64, H), make([]float64, H)
	state := make([]uint32, ir.StateWords())
	check := make([]uint32, ir.StateWords())
	raw := make([]int32, len(ir.Inputs))
	mismatch := 0
	for k, row := range d.rows {
		if k%ir.SeqLen == 0 {
			clear(h)
			clear(c)
			clear(state)
			clear(check)
		}
		for i, in := range ir.Inputs {
			raw[i] = in.Quantize(row[i])
		}
		yq, tr := ir.StepTrace(raw, state)
		if ir.Step(raw, check) != yq || !slices.Equal(state, check) || ir.OutTable[tr.Z+quantize.OutHalf] != yq {
			mismatch++
			copy(check, state)
		}
		xt, gates, y := lstmFloat(m, d.rep.Figures.Repr(row), h, c)
		for j := range ir.Pre.Out {
			add(vals[0], float64(tr.Pre[j])*ir.PreScale[j], xt[j])
		}
		for r, idx := range tr.Gate {
			g := float64(ir.Sigmoid[idx+128]) / 128
			if r/H == 2 {
				g = float64(ir.GTable[idx+128]) * ir.CellScale
			}
			add(vals[1+r/H], g, gates[r])
		}
		for j := range H {
			add(vals[5], ir.CellValue(tr.C[j]), c[j])
			add(vals[6], float64(tr.H[j])/127, h[j])
		}
		add(vals[7], ir.OutValue(yq), y)
	}
	if mismatch > 0 {
		d.rep.Notes = append(d.rep.Notes, fmt.Sprintf("internal error: LSTMIR.StepTrace differs from LSTMIR.Step on %d rows", mismatch))
	}
	for _, a := range vals {
		t := LayerTrace{Layer: a.layer, Name: a.name, Act: a.act, Units: a.units, Bits: a.bits, MaxAbs: a.mx}
		if a.n > 0 {
			t.RMSE = math.Sqrt(a.sq / float64(a.n))
		}
		d.rep.Trace = append(d.rep.Trace, t)
	}
}

// WriteText prints the report for a terminal.
func (r *DiffReport) WriteText(w io.Writer) error {
	s := r.Stats
	termtext.Printf(w, "teacher  %s (%s)\nagainst  %s: %s\nrows     %d: %s\n", r.Teacher, r.TeacherKind, r.Against, r.Student, s.Rows, r.Calib)
	termtext.Printf(w, "|Δy|     max %.6f  RMSE %.6f  p50 %.6f  p90 %.6f  p99 %.6f  p99.9 %.6f\n", s.MaxAbs, s.RMSE, s.P50, s.P90, s.P99, s.P999)
	termtext.Printf(w, "flips    %d of %d decisions (%.3f%%) change direction (increase, decrease, hold within ±0.5%%)\n", s.Flips, s.Rows, 100*s.FlipRate)
	if len(r.Trace) > 0 {
		termtext.Printf(w, "\nper-layer trace (float vs dequantized integer activations):\n%5s %-5s %-8s %5s %4s  %10s %10s\n", "layer", "value", "act", "units", "bits", "max abs", "RMSE")
		for _, t := range r.Trace {
			name := t.Name
			if name == "" {
				name = "-"
			}
			termtext.Printf(w, "%5d %-5s %-8s %5d %4d  %10.6f %10.6f\n", t.Layer, name, t.Act, t.Units, t.Bits, t.MaxAbs, t.RMSE)
		}
	}
	if r.Params != nil {
		termtext.Printf(w, "rl-cc    %s\n", r.Params)
	}
	for _, n := range r.Notes {
		termtext.Printf(w, "note     %s\n", n)
	}
	if len(r.Plots) > 0 {
		termtext.Printf(w, "\nwrote %s\n", strings.Join(r.Plots, ", "))
	}
	return nil
}
