package golden

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// quantizeInt8 is the quantize stage for --target int: the input formats (RL-CC: nicsdk's
// Q16 ranges; none: the hull of the calibration rows, padded), the calibration rows, and
// quantize.MLP (chooseMLP) or quantize.LSTM (quantizeLSTM).
func (c *Model) QuantizeInt8() error {
	m := c.Float
	for k, l := range m.Layers {
		for j, row := range l.W {
			for i, w := range row {
				if math.IsNaN(w) || math.IsInf(w, 0) {
					return fmt.Errorf("%s: layer %d weight [%d][%d] is %v: weights must be finite", c.Opt.Model, k, j, i, w)
				}
			}
		}
		for j, b := range l.B {
			if math.IsNaN(b) || math.IsInf(b, 0) {
				return fmt.Errorf("%s: layer %d bias %d is %v: biases must be finite", c.Opt.Model, k, j, b)
			}
		}
	}
	calib, err := c.CalibRows()
	if err != nil {
		return err
	}
	var inputs []quantize.Input
	if c.Handler == artifact.HandlerRLCC {
		inputs = c.rlccInputs()
	} else {
		lo, hi := quantize.RowRanges(m.NumInputs(), calib, c.Rows)
		for range lo {
			c.InputSources = append(c.InputSources, "calibration rows, padded")
		}
		if inputs, err = quantize.ChooseInputs(m.Inputs, lo, hi); err != nil {
			return c.inputRangeError(calib, lo, hi, err)
		}
	}
	if m.Kind() == model.KindLSTM {
		return c.QuantizeLSTM(inputs, calib)
	}
	// The corners of the declared input ranges join the calibration set, so the activation
	// scales cover every input the firmware can see: the RL-CC handler feeds o up to its
	// clamp (128), beyond the sampler's 76.8, where scales calibrated on the samples alone
	// saturate hidden units and can flip the output's sign.
	calib, corners := WithCorners(calib, inputs)
	if corners {
		c.Calib += fmt.Sprintf(", and the %d corners of the input ranges", 1<<len(inputs))
	}
	return c.ChooseMLP(inputs, calib)
}

// withCorners appends the corners of the input ranges to a dense network's calibration rows
// when there are at most 8 inputs (256 corners).
func WithCorners(calib [][]float64, inputs []quantize.Input) ([][]float64, bool) {
	if len(inputs) > 8 {
		return calib, false
	}
	for mask := range 1 << len(inputs) {
		row := make([]float64, len(inputs))
		for i, in := range inputs {
			row[i] = in.Value(in.Min)
			if mask>>i&1 == 1 {
				row[i] = in.Value(in.Max)
			}
		}
		calib = append(calib, row)
	}
	return calib, true
}

// chooseMLP quantizes the dense network with Int8Options.Quant, or, when that is zero, with
// each of Int8Candidates in turn until one meets the fidelity targets (else the cheapest
// within Int8NearDy of the most accurate), recording each try for the report.
func (c *Model) ChooseMLP(inputs []quantize.Input, calib [][]float64) error {
	cands := []quantize.MLPOptions{c.Opt.Int8.Quant}
	if cands[0] == (quantize.MLPOptions{}) {
		cands = Int8Candidates
	}
	type built struct {
		ir *quantize.MLPIR
		q  quantize.MLPOptions
	}
	var made []built // cheapest first
	var chosen *built
	var firstErr error
	for _, q := range cands {
		ir, err := quantize.MLP(c.Float, inputs, calib, q)
		if err != nil {
			// int8 weights can fail to prove an accumulator that int16 weights widen.
			firstErr = cmp.Or(firstErr, err)
			c.Int8Trials = append(c.Int8Trials, artifact.Int8Trial{WeightBits: q.WeightBits, ActBits: q.ActBits, Packed: q.Packed, OpenReLU: q.OpenReLU, UnitOutput: q.UnitOutput, Refused: err.Error()})
			continue
		}
		f := ir.Fidelity
		ok := f.MaxAbs <= Int8MaxAbsDy && f.Flips <= Int8MaxFlips
		c.Int8Trials = append(c.Int8Trials, artifact.Int8Trial{WeightBits: q.WeightBits, ActBits: q.ActBits, Packed: q.Packed, OpenReLU: q.OpenReLU, UnitOutput: q.UnitOutput, MaxAbsDy: f.MaxAbs, FlipRate: f.Flips, MeetsTargets: ok})
		made = append(made, built{ir, q})
		if ok {
			chosen = &made[len(made)-1]
			break
		}
	}
	if len(made) == 0 {
		return fmt.Errorf("%s: %w", c.Opt.Model, firstErr)
	}
	if chosen == nil {
		// None met the targets: the cheapest within Int8NearDy of the most accurate.
		least := made[0].ir.Fidelity.MaxAbs
		for _, b := range made {
			least = min(least, b.ir.Fidelity.MaxAbs)
		}
		for i := range made {
			if made[i].ir.Fidelity.MaxAbs <= least+Int8NearDy {
				chosen = &made[i]
				break
			}
		}
		if len(cands) > 1 {
			c.Notes = append(c.Notes, fmt.Sprintf("no integer configuration met max |dy| <= %g and flips <= %g%% on the calibration rows; the cheapest within %g of the most accurate's max |dy| (%.4g) was chosen", Int8MaxAbsDy, 100*Int8MaxFlips, Int8NearDy, least))
		}
	}
	best, bestQ := chosen.ir, chosen.q
	if len(cands) == 1 {
		c.Int8Trials = nil // the configuration was given, not chosen
	}
	// Under the RL-CC handler the final tanh's table folds with the action → multiplier map:
	// the policy returns the multiplier (nicsdk.OutM), which saves the handler its map.
	if c.Handler == artifact.HandlerRLCC {
		best.FoldRLCC()
	}
	c.Policy = best
	c.Int8Quant = bestQ
	return nil
}

// inputRangeError names the row behind a --handler none input range that no int32 format
// can hold: the value of largest magnitude of the first such input, in the calibration rows
// or the Ranges rows.
func (c *Model) inputRangeError(calib [][]float64, lo, hi []float64, err error) error {
	for i, name := range c.Float.Inputs {
		if _, e := quantize.ChooseInputs([]string{name}, lo[i:i+1], hi[i:i+1]); e == nil {
			continue
		}
		file, row, v := "", 0, 0.0
		for _, src := range []struct {
			file string
			rows [][]float64
		}{{c.Opt.Int8.Calib, calib}, {c.Opt.Ranges, c.Rows}} {
			for r, x := range src.rows {
				if a := math.Abs(x[i]); a > math.Abs(v) || file == "" {
					file, row, v = src.file, r+1, x[i]
				}
			}
		}
		if file != "" {
			return fmt.Errorf("%s: row %d: %s is %g, beyond any int32 fixed-point input (%v)", file, row, name, v, err)
		}
	}
	return fmt.Errorf("%s: %w", c.Opt.Model, err)
}

// quantizeLSTM is quantize.LSTM over the calibration rows (as sequences; without the range
// corners, which would coarsen x_t's grid: beyond its calibrated max x_t saturates, and the
// lanes are proven over the whole declared ranges either way). Under the RL-CC
// handler the output grid's 2·OutHalf values of y fold with the action → multiplier map into
// one table: the policy returns the multiplier (nicsdk.OutM).
func (c *Model) QuantizeLSTM(inputs []quantize.Input, calib [][]float64) error {
	if c.Opt.Int8.Quant != (quantize.MLPOptions{}) {
		return fmt.Errorf("%s: --weight-bits and --act-bits apply to dense networks; the int8 LSTM path chooses its own formats", c.Opt.Model)
	}
	ir, err := quantize.LSTM(c.Float, inputs, calib, quantize.LSTMOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", c.Opt.Model, err)
	}
	if c.Handler == artifact.HandlerRLCC {
		ir.FoldRLCC()
	}
	c.Policy = ir
	return nil
}

// calibRows are the Int8 calibration rows: the Calib CSV, or sampled RL-CC states (refused
// beyond MemoryLimit). They are read once; nicc diff compares on the rows compile calibrated on.
func (c *Model) CalibRows() ([][]float64, error) {
	if c.CalibSet == nil {
		rows, err := c.readCalib()
		if err != nil {
			return nil, err
		}
		c.CalibSet = slices.Clip(rows)
	}
	return c.CalibSet, nil
}

// calibStream is how many RL-CC states Int8Options.Samples draws and a stream of them (the
// rows calibRows holds, one at a time); it names them in c.calib.
func (c *Model) CalibStream() (int, func(row []float64), error) {
	o, n := c.Opt.Int8, c.Float.NumInputs()
	if c.Handler != artifact.HandlerRLCC {
		return 0, nil, noRLCCStates(c.Opt.Model, c.Opt.Handler, c.Float.Inputs)
	}
	k := o.Samples
	if k == 0 {
		k = DefaultCalibSamples
	}
	if k < 1 || k > distill.MaxSamples {
		return 0, nil, fmt.Errorf("samples %d: want 1 to %d", k, distill.MaxSamples)
	}
	s := rlcc.SamplerFor(c.Params)
	if w := c.Layout().Inputs(); w != n {
		return 0, nil, fmt.Errorf("internal error: the RL-CC sampler gives %d inputs, model %s takes %d", w, c.Float.Name, n)
	}
	next, err := s.StreamLayout(c.Opt.Seed, c.Layout())
	if err != nil {
		return 0, nil, err
	}
	c.Calib = fmt.Sprintf("%d RL-CC states sampled with T = %.4g (seed %d)", k, s.T(), c.Opt.Seed)
	return k, next, nil
}

// readCalib reads the Calib CSV, or draws the sampled states.
func (c *Model) readCalib() ([][]float64, error) {
	o, n := c.Opt.Int8, c.Float.NumInputs()
	if o.Calib == "" {
		k, next, err := c.CalibStream()
		if err != nil {
			return nil, err
		}
		if err := memlimit.Check(k, memlimit.CalibRowBytes(c.Float), fmt.Sprintf("calibrating %s on %d RL-CC states", c.Float.Name, k), "state"); err != nil {
			return nil, err
		}
		rows := make([][]float64, k)
		flat := make([]float64, k*n)
		for r := range rows {
			rows[r] = flat[r*n : (r+1)*n : (r+1)*n]
			next(rows[r])
		}
		return rows, nil
	}
	t, err := model.ReadCSVFile(o.Calib)
	if err != nil {
		return nil, err
	}
	rows := t.Data
	if t.Names != nil {
		// A header selects the columns by name, in any order; one that does not name every
		// input is refused rather than read by position.
		for _, name := range c.Float.Inputs {
			if !slices.Contains(t.Names, name) {
				return nil, fmt.Errorf("%s: the header has no column %q; model %s takes %d inputs (%s): name each in the header, or drop the header to read the columns in order",
					o.Calib, name, c.Float.Name, n, strings.Join(c.Float.Inputs, ", "))
			}
		}
		for r, row := range rows {
			sel := make([]float64, n)
			for i, name := range c.Float.Inputs {
				sel[i] = row[slices.Index(t.Names, name)]
			}
			rows[r] = sel
		}
	}
	for r, row := range rows {
		if len(row) != n {
			return nil, fmt.Errorf("%s: row %d has %d values; model %s takes %d inputs", o.Calib, r+1, len(row), c.Float.Name, n)
		}
		for i, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: row %d: %s is %v: calibration values must be finite", o.Calib, r+1, c.Float.Inputs[i], v)
			}
		}
	}
	if o.Samples > 0 && o.Samples < len(rows) {
		rows = rows[:o.Samples]
	}
	c.Calib = fmt.Sprintf("%d rows of %s", len(rows), o.Calib)
	return rows, nil
}

// DefaultCalibSamples is how many RL-CC states Int8Options.Samples 0 draws to calibrate.
const DefaultCalibSamples = 20_000

// Int8Options say how a dense network is quantized for --target int.
type Int8Options struct {
	// Calib is a CSV of calibration rows, one value per model input (or a header naming every
	// input); "" draws Samples RL-CC states (the RL-CC sampler under Params, seeded by Seed), which needs
	// the RL-CC handler.
	Calib   string
	Samples int // 0 is DefaultCalibSamples
	// Quant are quantize.MLP's options; the zero value chooses from Int8Candidates by the
	// measured error.
	Quant quantize.MLPOptions
}

// Int8Candidates are the configurations a dense network's quantization tries when none is
// given, cheapest first; the first whose fidelity on the calibration rows meets
// Int8MaxAbsDy and Int8MaxFlips is chosen, else the cheapest whose max |Δy| is within
// Int8NearDy of the most accurate's (a wide tanh network whose int16 form is over the budget
// and barely more accurate than its packed int8 one). All-int8, packed, is cheapest; on
// the shipped RL-CC teacher only the packed configurations meet the targets (its hidden
// activations span ~0..70 and cancel), and the first of them, with unit output weights, is
// also the most accurate.
var Int8Candidates = []quantize.MLPOptions{
	{WeightBits: 8, ActBits: 8, ChannelScales: true, Packed: true},
	{WeightBits: 8, ActBits: 16, ChannelScales: true},
	{WeightBits: 16, ActBits: 16, ChannelScales: true, Packed: true, OpenReLU: true, UnitOutput: true},
	{WeightBits: 16, ActBits: 16, ChannelScales: true, Packed: true, OpenReLU: true},
	{WeightBits: 16, ActBits: 16, ChannelScales: true, Packed: true},
	{WeightBits: 16, ActBits: 16, ChannelScales: true},
}

// The fidelity a dense network's automatic configuration must reach on the calibration rows:
// max |Δy| and the fraction of rows whose RL-CC direction differs.
const (
	Int8MaxAbsDy = 2.0 / 128
	Int8MaxFlips = 0.001
	// Int8NearDy is how much more max |Δy| than the most accurate configuration's a cheaper one
	// may have to be chosen when none meets the targets.
	Int8NearDy = 1.0 / 128
)
