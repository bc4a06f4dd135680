package quantize

// # The integer MLP path
//
// MLP turns a dense-only network (ReLU, tanh or identity activations, one output) into MLPIR,
// an integer network whose Go evaluator (MLPIR.Eval) is the golden model of the generated C.
//
// Inputs. Each input is an int32 raw fixed-point value in [Input.Min, Input.Max], clamped to
// it first (so Eval is total), then shifted: q = (x + 2^(s−1)) >> s, round half up in 64 bits
// (q = x when s = 0); one step of q is worth 2^(s−Frac). The inputs are not requantized to
// int8: an int8 grid over RL-CC's observation range [−0.768, 128] has a step of 0.5, far
// coarser than the policy's sensitivity near o = 0. With int8 weights the shifts are the least
// that let the first layer's int32 accumulators be proven (starting at 0, the widest input
// shifted one bit at a time); with int16 weights they are 0 and the accumulators widen.
//
// Weights. Per output channel j, symmetric: scale w_j = max_i |W_ji·step_i| / Wmax,
// q_ji = round(W_ji·step_i / w_j) (ties away from zero), Wmax = 127 (int8, the default) or
// 32767 (MLPOptions.WeightBits 16); step_i is what one step of the layer's i-th integer input
// is worth, so channel j's accumulator has scale w_j. Biases are int32 in that scale.
//
// Accumulators. The range of every partial sum B_j + Σ_{i<k} q_ji·x_i and every term q_ji·x_i
// is proven by interval analysis over the layer's input ranges (the first layer's: the
// declared raw ranges). It must fit int32 with int8 weights (else MLP refuses); with int16
// weights a layer whose proof exceeds int32 gets int64 accumulators (MLPLayer.AccBits).
//
// Requantization. Per channel, an int32 multiplier m_j and shift n_j (1..62): z = (acc·m_j +
// 2^(n_j−1)) >> n_j in int64, round half up (floor of an arithmetic shift), with
// |acc|·m_j + 2^(n_j−1) < 2^63 proven; m_j/2^n_j ≈ w_j/s_out, m_j as large as that proof and
// 2^31 allow.
//
// Activations (hidden layers): per tensor, symmetric, zero point 0, int16 by default or int8
// (MLPOptions.ActBits); s_out = max |pre-activation| over the calibration set / (2^(bits−1)−1)
// (max abs, no percentile clipping; ReLU: the max positive pre-activation).
//   - relu: z clamped to [0, zmax] (OpenReLU: at 0 only, the next layer's proofs taking z's
//     proven range);
//   - identity: z clamped to [−zmax−1, zmax];
//   - tanh (always int8): z clamped to [−128, 127], then a 256-entry int8 table, entry
//     round(127·tanh(z·s_out)), output scale 1/127; exact per entry.
//
// Output (the last layer, one output): int32 in Q(OutFrac).
//   - tanh: z on an int16 grid (default) spanning ±min(calibrated max, TanhClip) with a
//     257-knot Q(OutFrac) table and linear interpolation (MLPLayer.TableErr states the bound),
//     or on an int8 grid with a 256-entry table exact per entry (MLPOptions.TanhBits 8);
//   - identity / relu: requantized straight to Q(OutFrac) (s_out = 2^−OutFrac), relu clamped
//     at 0; the proven range must fit int32.
//
// Packed (MLPOptions.Packed, mlp_pack.go): hidden layers requantize by a shift alone (Mult 1),
// their weights int16 at the largest power-of-two scale that proves every accumulator in int32,
// biases corrected for the weights' rounding at the calibration means, the first layer's
// inputs shifted until ±8191 weights prove int32; with OpenReLU, hidden relus without the
// upper clamp. Codegen then computes two channels with one
// 64-bit multiply per input. On the teacher: max |Δy| 0.0039, flips 0.090% (with the corners).
// With WeightBits 8, a layer over int8 inputs (after a hidden tanh or an int8 activation)
// takes int8 weights in 21-bit lanes, three channels to a multiply; the first layer, over
// the int32 inputs, keeps the 32-bit pairs and their int16 weights. On a 4→32→32→1 tanh MLP
// with biases fit to the teacher: max |Δy| 0.030, flips 0.68%.
//
// Unit output weights (MLPOptions.UnitOutput, mlp_unit.go): each final weight's magnitude moves
// into the relu channel it reads, so the final layer is a sum of its inputs with signs and its
// requantization a shift: no multiply there. The channels before it share one scale, as fine
// as their lane proofs allow, which keeps more of them than a 16-bit grid each: on the
// teacher max |Δy| 0.0023, flips 0.045% (with the corners).
//
// Measured on the shipped RL-CC teacher over 20k sampled states (see the tests): all-int8
// (int8 weights and activations, 8-bit output tanh) misses the targets by far (max
// |Δy| ≈ 0.76, 11% direction flips): the teacher's hidden activations span ~0..70 and cancel,
// so per-channel int8 weights lose the result. int16 weights and activations with the
// interpolated output tanh give max |Δy| ≈ 0.0034 (0.43/128) and 0.115% flips; with a scale
// per hidden channel (ChannelScales) max |Δy| ≈ 0.0026 (0.33/128), flips unchanged at 0.115%:
// the flips are states within a few 1e-4 of the ±0.5% hold band's edge.

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

// MLPOptions control MLP.
type MLPOptions struct {
	// OutFrac is the output's fraction bits, 1..MaxOutFrac; 0 means DefaultOutFrac (Q16).
	OutFrac int
	// ActBits is the width of hidden relu and identity activations: 8 or 16; 0 means 16 (the
	// int8 grid loses the teacher's small activations, see MLP). Hidden tanh is always int8.
	ActBits int
	// WeightBits is the width of the weights, per output channel symmetric: 8 (the default) or
	// 16. With 16, an accumulator whose proven range exceeds int32 widens to int64.
	WeightBits int
	// ChannelScales gives hidden relu and identity activations one scale per channel (from
	// the channel's calibrated max) instead of one per tensor. The next layer's per-channel
	// weight scales absorb them, so they cost nothing at run time.
	ChannelScales bool
	// TanhBits is the width of a final tanh's pre-activation grid: 8 (a 256-entry table, exact
	// per entry) or 16 (a 257-entry table with linear interpolation, error bound in
	// MLPLayer.TableErr); 0 means 16.
	TanhBits int
	// TanhClip bounds the final tanh's pre-activation grid to [−TanhClip, TanhClip] (beyond it
	// tanh is within 1 − tanh(TanhClip) of ±1); 0 means DefaultTanhClip8 or DefaultTanhClip16.
	// The grid spans min(TanhClip, calibrated max) either way.
	TanhClip float64
	// Packed requantizes hidden layers by a shift alone (MLPLayer.Mult 1): each channel's
	// weights are scaled by the largest power of two at which they fit int16 and every
	// partial sum, rounding half included, is proven in int32. Two such accumulators share
	// one 64-bit register in the C (codegen packs them), so one multiply advances two
	// channels. With WeightBits 8, a layer whose inputs are int8 takes int8 weights proven in
	// 21-bit lanes instead, three to a register (MLPLayer.LaneBits). The final layer is
	// quantized as without it.
	Packed bool
	// OpenReLU (with Packed) drops hidden relus' upper clamp (MLPLayer.Open): one instruction
	// less a channel and no saturation, but the next layer's lane proof takes z's whole proven
	// range, which can cost its weights a bit.
	OpenReLU bool
	// UnitOutput (with Packed) moves the magnitude of each final-layer weight into the relu
	// channel it reads, relu(c·s) = c·relu(s) for c > 0 (mlp_unit.go): the final layer's
	// weights are ±1 (0 for a zero weight, whose channel is then never computed), so it is
	// a signed sum, and the channels before it share one scale, the final grid's step over a
	// power of two, so its requantization is a shift. It needs a hidden relu layer just before
	// the final one.
	UnitOutput bool
}

// DefaultTanhClip8 balances the int8 final tanh table's two errors: half a grid step,
// TanhClip/254, and the clip, 1 − tanh(TanhClip).
const DefaultTanhClip8 = 2.65

// HiddenTanhClip bounds a hidden tanh's int8 pre-activation grid to ±HiddenTanhClip
// (spanning min(HiddenTanhClip, calibrated max)), as DefaultTanhClip8 does a final one's:
// a grid over a first layer's whole calibrated range (±100 with o up to 128) has steps of
// 0.8, where tanh is steep (on a 4→32→32→1 tanh net fit to the teacher: max |Δy| 0.65
// spanning the calibrated max, 0.07 clipped).
const HiddenTanhClip = DefaultTanhClip8

// DefaultTanhClip16 is the int16 grid's clip: 1 − tanh(8) < 2.3e-7.
const DefaultTanhClip16 = 8

// tanh2 is max |tanh”| = 4/(3√3), for the interpolation error bound h²/8·max|f”|.
const tanh2 = 0.769800358919501

// MLPLayer is one integer dense layer.
type MLPLayer struct {
	In, Out int
	// W is Out×In weights, int8 or int16 values (MLPIR.WeightBits); B the int32 biases in the accumulator's scale (zeros when the
	// model has none).
	W [][]int16
	B []int32
	// Mult and Shift requantize channel j: (acc·Mult[j] + 2^(Shift[j]−1)) >> Shift[j].
	Mult  []int32
	Shift []int
	Act   Act
	// AccBits is the accumulator's C type: 32, or 64 when the proof needs it (int16 weights).
	AccBits int
	// Bits is the width of the layer's output grid z: 8 or 16 (hidden), 8 (final tanh), 32
	// (final relu or identity, Q(OutFrac)).
	Bits int
	// Final is the last layer: its result is Q(OutFrac) int32.
	Final bool
	// LaneBits is the width of the packed lanes a hidden layer's channels take under
	// MLPOptions.Packed (mlp_pack.go): 32 or 21; 0 when the layer is not packed.
	LaneBits int
	// Open is a hidden relu layer without the grid's upper clamp (MLPOptions.Packed): z
	// keeps its proven range, which the next layer's proofs take as its inputs'.
	Open bool
	// InRange is the proven range of each integer input; Acc the proven range of every partial
	// sum of each channel's accumulator; Z the proven range of the requantized value before
	// the clamp.
	InRange []Interval
	Acc     []Interval
	Z       []Interval
	// InStep is what one step of each integer input is worth; WScale each channel's
	// accumulator scale; OutScale the scale of z (2^−OutFrac for a final relu or identity).
	InStep   []float64
	WScale   []float64
	OutScale float64
	// ZScale is each channel's scale of z: OutScale, or with MLPOptions.ChannelScales the
	// channel's own calibrated max / zmax (hidden relu and identity layers).
	ZScale []float64
	// Table is a hidden tanh's int8 table, indexed by z+128 (output scale 1/127).
	Table []int8
	// OutTable is a final tanh's Q(OutFrac) table: 256 entries indexed by z+128 (8 bits), or
	// 257 interpolation knots (16 bits); see tanhTable.
	OutTable []int32
	// TableErr bounds |OutTable lookup − tanh(z·OutScale)| over the grid; ClipErr is
	// 1 − tanh(grid end), nonzero when calibration saw pre-activations beyond the grid.
	TableErr, ClipErr float64
}

// Fidelity is how closely the integer network follows the float one on the calibration set.
type Fidelity struct {
	Rows int
	// MaxAbs is max |y_int − y_float|, y_int = Eval / 2^OutFrac, y_float the float model at
	// the same representable input (the row quantized to the input formats, clamped to range).
	MaxAbs float64
	// Flips is the fraction of rows whose direction (increase, hold, decrease) under the RL-CC
	// multiplier map (1+0.2y, or 1/(1−0.2y) for y < 0; hold within ±0.5%) differs.
	Flips float64
}

// MLPIR is an integer MLP; Eval is its meaning.
type MLPIR struct {
	Name      string
	ModelHash string
	Inputs    []Input
	// InShift requantizes input i (after the clamp to its range): (x + 2^(s−1)) >> s, x when
	// s = 0.
	InShift []int
	OutFrac int
	// WeightBits is 8 or 16.
	WeightBits int
	Layers     []MLPLayer
	// Out is the proven range of the result.
	Out Interval
	// Fidelity is measured against the float model on the calibration set.
	Fidelity Fidelity
	// Fold, when set (FoldRLCC), is the final tanh's table with each entry (knot) mapped to
	// its RL-CC multiplier in Q16: Call looks z up in it, as in OutTable, and returns the
	// multiplier (the handler's RLCC_OUT_M); Eval still returns y.
	Fold []int32
}

// MLP quantizes a dense-only model. inputs are the int32 fixed-point formats of its inputs;
// calib are float input rows (len = model inputs) that set the activation scales and on which
// fidelity is measured.
func MLP(m *model.Model, inputs []Input, calib [][]float64, opt MLPOptions) (*MLPIR, error) {
	if m == nil || len(m.Layers) == 0 || m.Ensemble != nil {
		return nil, fmt.Errorf("quantize: MLP needs a dense network")
	}
	outFrac := opt.OutFrac
	if outFrac == 0 {
		outFrac = DefaultOutFrac
	}
	if outFrac < 1 || outFrac > MaxOutFrac {
		return nil, fmt.Errorf("quantize: output fraction bits %d outside 1..%d", outFrac, MaxOutFrac)
	}
	if err := checkMLPShape(m); err != nil {
		return nil, err
	}
	if err := checkInputs(m, inputs); err != nil {
		return nil, err
	}
	if err := checkCalib(calib, len(m.Inputs)); err != nil {
		return nil, err
	}
	actBits := opt.ActBits
	if actBits == 0 {
		actBits = 16
	}
	if actBits != 8 && actBits != 16 {
		return nil, fmt.Errorf("quantize: activation width %d (want 8 or 16)", actBits)
	}
	wbits := opt.WeightBits
	if wbits == 0 {
		wbits = 8
	}
	if wbits != 8 && wbits != 16 {
		return nil, fmt.Errorf("quantize: weight width %d (want 8 or 16)", wbits)
	}
	for k, l := range m.Layers {
		if l.In > 4096 {
			return nil, fmt.Errorf("quantize: layer %d has %d inputs (at most 4096)", k, l.In)
		}
	}
	wmax := float64(int64(1)<<(wbits-1) - 1)
	tbits := opt.TanhBits
	if tbits == 0 {
		tbits = 16
	}
	if tbits != 8 && tbits != 16 {
		return nil, fmt.Errorf("quantize: tanh grid width %d (want 8 or 16)", tbits)
	}
	clip := opt.TanhClip
	if clip == 0 {
		clip = DefaultTanhClip16
		if tbits == 8 {
			clip = DefaultTanhClip8
		}
	}
	if !(clip > 0) || math.IsInf(clip, 0) {
		return nil, fmt.Errorf("quantize: tanh clip %v (want > 0)", clip)
	}
	hash, err := model.Hash(m)
	if err != nil {
		return nil, err
	}
	ir := &MLPIR{Name: m.Name, ModelHash: hash, Inputs: slices.Clone(inputs), OutFrac: outFrac, WeightBits: wbits}
	// qm is the network quantized: m, or under UnitOutput the same function with the final
	// weights' magnitudes in the channels before them. Fidelity is measured against m.
	qm := m
	if opt.UnitOutput {
		if qm, err = unitOutput(m, opt); err != nil {
			return nil, err
		}
	}

	maxAbs, chMax, err := calibrateMLP(qm, ir.Inputs, calib)
	if err != nil {
		return nil, err
	}

	inW := wmax
	if opt.Packed {
		inW = packedInWeightMax
	}
	rng, step, err := ir.fitInputShifts(&qm.Layers[0], wbits == 16 && !opt.Packed, inW)
	if err != nil {
		return nil, err
	}

	b := mlpBuild{ir: ir, opt: opt, actBits: actBits, wbits: wbits, tbits: tbits, outFrac: outFrac, clip: clip, wmax: wmax,
		maxAbs: maxAbs, chMax: chMax}
	if opt.Packed {
		b.means = inputMeans(qm, ir.Inputs, calib)
	}
	for k := range qm.Layers {
		var ql MLPLayer
		var next []Interval
		var nstep []float64
		if opt.UnitOutput && k == len(qm.Layers)-2 {
			ql, next, nstep, err = b.unitLayer(k, qm, rng, step)
		} else {
			ql, next, nstep, err = b.layer(k, &qm.Layers[k], k == len(qm.Layers)-1, rng, step)
		}
		if err != nil {
			return nil, err
		}
		ir.Layers = append(ir.Layers, ql)
		rng, step = next, nstep
	}
	ir.Fidelity = ir.measure(m, calib)
	return ir, nil
}

// checkCalib refuses an empty calibration set, a row of the wrong width, and NaN.
func checkCalib(calib [][]float64, n int) error {
	if len(calib) == 0 {
		return fmt.Errorf("quantize: empty calibration set")
	}
	for r, row := range calib {
		if len(row) != n {
			return fmt.Errorf("quantize: calibration row %d has %d values, the model takes %d", r, len(row), n)
		}
		if slices.ContainsFunc(row, math.IsNaN) {
			return fmt.Errorf("quantize: calibration row %d has NaN", r)
		}
	}
	return nil
}

// inputGrid is the integer inputs' ranges and step values under ir.InShift.
func (ir *MLPIR) inputGrid() ([]Interval, []float64) {
	rng := make([]Interval, len(ir.Inputs))
	step := make([]float64, len(ir.Inputs))
	for i, in := range ir.Inputs {
		s := ir.InShift[i]
		rng[i] = Interval{ShiftRound(int64(in.Min), s), ShiftRound(int64(in.Max), s)}
		step[i] = math.Ldexp(1, s-in.Frac)
	}
	return rng, step
}

func activate(a model.Activation, s float64) float64 {
	switch a {
	case model.ActReLU:
		return max(s, 0)
	case model.ActTanh:
		return math.Tanh(s)
	}
	return s
}

// Act is an integer layer's activation, as its golden model and its C compute it.
type Act uint8

const (
	ActIdentity Act = iota // the requantized value, clamped to the layer's width
	ActReLU                // clamped below at 0 too
	ActTanh                // looked up in the layer's tanh table
)

var actNames = [...]string{ActIdentity: "identity", ActReLU: "relu", ActTanh: "tanh"}

func (a Act) String() string {
	if int(a) < len(actNames) {
		return actNames[a]
	}
	return fmt.Sprintf("Act(%d)", uint8(a))
}

// actOf is the integer activation of a float one MLP has accepted (relu, tanh, identity).
func actOf(a model.Activation) Act {
	switch a {
	case model.ActReLU:
		return ActReLU
	case model.ActTanh:
		return ActTanh
	}
	return ActIdentity
}

// ShiftRound is (v + 2^(s−1)) >> s, round half up; v when s = 0.
func ShiftRound(v int64, s int) int64 {
	if s == 0 {
		return v
	}
	return (v + int64(1)<<(s-1)) >> s
}

// Requant is (acc·mult + 2^(sh−1)) >> sh.
func Requant(acc int64, mult int32, sh int) int64 { return ShiftRound(acc*int64(mult), sh) }

// Eval is the golden integer network: x holds one raw int32 per input (clamped to its declared
// range); the result is y in Q(OutFrac).
func (ir *MLPIR) Eval(x []int32) int32 {
	y, _ := ir.eval(x, false, false)
	return y
}

// Returned is nicc_policy's result: with Fold, the multiplier (looked up in Fold), else Eval.
func (ir *MLPIR) Returned(x []int32) int32 {
	y, _ := ir.eval(x, false, ir.Fold != nil)
	return y
}

// FoldRLCC folds the RL-CC action map into a final tanh's table (Fold = the multiplier of each
// entry, exact per entry; on the 16-bit grid the multiplier between knots is interpolated as y
// is, within 4 Q16 units of the map of the interpolated y: TestMLPPolicyFold checks every z).
// It reports whether it could: other final layers have no table.
func (ir *MLPIR) FoldRLCC() bool {
	l := &ir.Layers[len(ir.Layers)-1]
	if l.Act != ActTanh {
		return false
	}
	ir.Fold = make([]int32, len(l.OutTable))
	for k, y := range l.OutTable {
		ir.Fold[k] = int32(rlcc.FixedMultiplier(y))
	}
	return true
}

// EvalTrace is Eval with every hidden layer's integer outputs (the values the next layer
// reads, one step worth the next layer's InStep): layers[k] for each layer but the last.
func (ir *MLPIR) EvalTrace(x []int32) (y int32, layers [][]int64) {
	return ir.eval(x, true, false)
}

// eval is Eval (fold false) or Returned (fold true: the final tanh looks up Fold).
func (ir *MLPIR) eval(x []int32, trace, fold bool) (int32, [][]int64) {
	if len(x) != len(ir.Inputs) {
		panic(fmt.Sprintf("quantize: MLPIR.Eval got %d inputs, want %d", len(x), len(ir.Inputs)))
	}
	var layers [][]int64
	v := make([]int64, len(x))
	for i, in := range ir.Inputs {
		v[i] = ShiftRound(int64(min(max(x[i], in.Min), in.Max)), ir.InShift[i])
	}
	for k := range ir.Layers {
		l := &ir.Layers[k]
		next := make([]int64, l.Out)
		for j := range l.Out {
			acc := int64(l.B[j])
			for i, w := range l.W[j] {
				acc += int64(w) * v[i]
			}
			z := Requant(acc, l.Mult[j], l.Shift[j])
			switch {
			case l.Final && l.Act == ActTanh:
				table := l.OutTable
				if fold {
					table = ir.Fold
				}
				return l.Lookup(table, min(max(z, -l.ZMax()-1), l.ZMax())), layers
			case l.Final:
				if l.Act == ActReLU {
					z = max(z, 0)
				}
				return int32(z), layers
			case l.Act == ActTanh:
				next[j] = int64(l.Table[min(max(z, -128), 127)+128])
			case l.Act == ActReLU:
				next[j] = min(max(z, 0), l.ReluTop(j))
			default:
				next[j] = min(max(z, -l.ZMax()-1), l.ZMax())
			}
		}
		if trace {
			layers = append(layers, next)
		}
		v = next
	}
	panic("quantize: MLPIR has no final layer")
}

// tanhTable fills a final tanh's table and its error bound against tanh of the dequantized
// grid value z·OutScale.
//   - 8 bits: 256 entries, entry z+128 = round(2^outFrac·tanh(z·OutScale)) (ties away from
//     zero); error ≤ 2^−(outFrac+1) per entry.
//   - 16 bits: 257 knots, knot i at z = 256·i − 32768, same rounding; between knots
//     y = T[i] + ((T[i+1] − T[i])·f + 128) >> 8, u = z + 32768, i = u >> 8, f = u & 255 (round
//     half up). Error ≤ h²/8·max|tanh”| (h = 256·OutScale) + 2^−(outFrac+1) (knots)
//   - 2^−(outFrac+1) (the interpolation's rounding).
//
// Clipping at the grid's ends adds 1 − tanh(span) for pre-activations beyond the span
// (TableErr does not include it; calMax is the calibrated max, for the note in ClipErr).
func (l *MLPLayer) tanhTable(outFrac int, calMax float64) {
	ulp := math.Ldexp(1, -outFrac)
	t := func(z int64) int32 { return int32(math.Round(math.Ldexp(math.Tanh(float64(z)*l.OutScale), outFrac))) }
	if l.Bits == 8 {
		l.OutTable = make([]int32, 256)
		for z := int64(-128); z < 128; z++ {
			l.OutTable[z+128] = t(z)
		}
		l.TableErr = ulp / 2
	} else {
		l.OutTable = make([]int32, 257)
		for i := range int64(257) {
			l.OutTable[i] = t(256*i - 32768)
		}
		h := 256 * l.OutScale
		l.TableErr = h*h/8*tanh2 + ulp
	}
	span := float64(l.ZMax()) * l.OutScale
	if calMax > span {
		l.ClipErr = 1 - math.Tanh(span)
	}
}

// Lookup is a final tanh's lookup of z in the grid in table (OutTable or a fold of it), with
// interpolation on the 16-bit grid.
func (l *MLPLayer) Lookup(table []int32, z int64) int32 {
	if l.Bits == 8 {
		return table[z+128]
	}
	u := z + 32768
	i, f := u>>8, u&255
	a := int64(table[i])
	if f == 0 {
		return int32(a)
	}
	return int32(a + ((int64(table[i+1])-a)*f+128)>>8)
}

// ReluTop is where a hidden relu clamps channel j from above: the grid's top, or, Open, the
// top of z's proven range (no clamp).
func (l *MLPLayer) ReluTop(j int) int64 {
	if l.Open {
		return max(l.Z[j].Hi, 0)
	}
	return l.ZMax()
}

// ZMax is the top of a hidden layer's output grid: 127 or 32767.
func (l *MLPLayer) ZMax() int64 { return int64(1)<<(l.Bits-1) - 1 }

// LayerWeightBits is the width of layer l's weights: WeightBits, but 16 in packed pairs,
// whose lanes hold int16 weights whatever WeightBits (MLPOptions.Packed).
func (ir *MLPIR) LayerWeightBits(l *MLPLayer) int {
	if l.LaneBits == PairLaneBits {
		return 16
	}
	return ir.WeightBits
}

// OutValue is y / 2^OutFrac.
func (ir *MLPIR) OutValue(y int32) float64 { return math.Ldexp(float64(y), -ir.OutFrac) }

// representable is row as the NIC sees it: each value quantized to its input format (nearest,
// clamped to the declared range), as a float.
func representable(inputs []Input, row []float64) []float64 {
	x := make([]float64, len(row))
	for i, in := range inputs {
		x[i] = in.Value(in.Quantize(row[i]))
	}
	return x
}

// measure compares Eval with the float model on each row as the NIC sees it (quantized to the
// input formats and clamped to their ranges): the error is the integer network's alone.
func (ir *MLPIR) measure(m *model.Model, calib [][]float64) Fidelity {
	f := Fidelity{Rows: len(calib)}
	st := m.NewState()
	raw := make([]int32, len(ir.Inputs))
	flips := 0
	for _, row := range calib {
		for i, in := range ir.Inputs {
			raw[i] = in.Quantize(row[i])
		}
		yq := ir.OutValue(ir.Eval(raw))
		yf := m.Eval(st, representable(ir.Inputs, row))[0]
		f.MaxAbs = max(f.MaxAbs, math.Abs(yq-yf))
		if rlcc.DirectionOf(yq) != rlcc.DirectionOf(yf) {
			flips++
		}
	}
	f.Flips = float64(flips) / float64(len(calib))
	return f
}

// Dump is the IR as text: formats, per-layer scales, proven ranges and integer weights.
func (ir *MLPIR) Dump() string {
	var b []byte
	p := func(f string, a ...any) { b = fmt.Appendf(b, f, a...) }
	p("mlpir %q sha256:%s\n", ir.Name, ir.ModelHash)
	for i, in := range ir.Inputs {
		r, _ := ir.inputGrid()
		p("input %d %s -> (x + %d) >> %d in [%d, %d]\n", i, in, half(ir.InShift[i]), ir.InShift[i], r[i].Lo, r[i].Hi)
	}
	for k := range ir.Layers {
		l := &ir.Layers[k]
		p("layer %d dense %d->%d %s int%d weights int%d acc int%d", k, l.In, l.Out, l.Act, l.Bits, ir.LayerWeightBits(l), l.AccBits)
		if l.LaneBits != 0 {
			p(" lanes %d", l.LaneBits)
		}
		if l.Final {
			p(" final")
		}
		if l.Open {
			p(" open")
		}
		p(" out scale %g\n", l.OutScale)
		for j := range l.Out {
			p("  ch %d z scale %g w scale %g w %v b %d acc [%d, %d] requant *%d >>%d z [%d, %d]\n", j, l.ZScale[j], l.WScale[j], l.W[j], l.B[j],
				l.Acc[j].Lo, l.Acc[j].Hi, l.Mult[j], l.Shift[j], l.Z[j].Lo, l.Z[j].Hi)
		}
		if l.Table != nil {
			p("  tanh table int8 %v\n", l.Table)
		}
		if l.OutTable != nil {
			p("  tanh table Q%d error <= %g clip error %g %v\n", ir.OutFrac, l.TableErr, l.ClipErr, l.OutTable)
		}
	}
	p("out Q%d [%d, %d]\n", ir.OutFrac, ir.Out.Lo, ir.Out.Hi)
	p("fidelity %d rows max|dy| %g flips %g\n", ir.Fidelity.Rows, ir.Fidelity.MaxAbs, ir.Fidelity.Flips)
	return string(b)
}

func half(s int) int64 {
	if s == 0 {
		return 0
	}
	return int64(1) << (s - 1)
}
