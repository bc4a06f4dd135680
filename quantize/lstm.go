package quantize

// # The integer LSTM path
//
// LSTM turns dense(relu) → LSTM → dense(tanh, one output), the NIC paper's recurrent policy,
// into LSTMIR, whose Go evaluator (LSTMIR.Step) is the golden model of the generated C. One
// decision is one step; the recurrent state (h and c, a byte each) lives in the flow context.
//
// Lanes. The engine multiplies 64-bit registers but has no SIMD, so the generated C packs
// the gates' accumulators three to a uint64, 21 bits each (LaneBits), and one multiply of an
// input by a packed constant advances three output channels. That is exact because every
// channel's final sum V is proven in [−2^20, 2^20) by interval analysis: the packed register
// is Σ_l 2^(21l)·(V_l + 2^20) mod 2^64, each term in [0, 2^21), the sum below 2^63, so it
// holds the lanes exactly, whatever the partial sums did on the way (arithmetic mod 2^64
// commutes with the sum). Only the final sums are proven; the golden model computes each V in
// int64. The dense layer packs two 32-bit lanes (PreLaneBits) instead: its sum spans the
// declared inputs' whole range (o up to 100 targets), where 21 bits leave a trained layer's
// weights too coarse (max |Δy| 0.145 against 0.075 on rlcc_adpg_lstm); it has 4 inputs, so
// the extra words cost little beside the gates' 24.
//
// Requantization is a shift. A lane's sum V is in units of step/2^n_j (step the table grid's
// step, n_j one shift per channel, the largest the lane proof allows), so the table index is
// floor(V/2^n_j) with the rounding half folded into the bias: weights are
// round(w·input_step·2^n_j/step), integers of any width the proof allows: the lane bound, not
// an int8 cap, limits them. A lane multiplies whatever the weights' width, so this costs
// nothing; capping them at ±127 per channel (per-channel symmetric int8) measures max |Δy|
// 0.0165 and 1.24% flips on the shipped LSTM, against 0.0119 and 0.75%.
//
// Layers and formats:
//   - inputs: raw int32, clamped to the declared range, shifted right with rounding half up
//     (InShift) to at most 14 significant bits (12 measured max |Δy| 0.0752 on rlcc_adpg_lstm,
//     14 0.0717, with the rest as it was then);
//   - pre (dense, relu): x_t in [0, PreMax] per channel, x_t = clamp(floor(V/2^n_j), 0,
//     PreMax), value x_t·PreScale[j] (the channel's calibrated max / PreMax);
//   - gates (i, f, g, o; PyTorch order): V over (x_t, h), each x_t taken over its proven range
//     (LaneLayer.Act), so a ReLU unit that no declared input turns on has zero gate weights
//     and costs the firmware nothing; index = clamp(floor(V/2^n_j),
//     −128, 127); i, f, o = Sigmoid[index+128] in [0, 128] (value /128, exact per entry:
//     round(128·σ(index·SigStep))); g = GTable[index+128] = round(tanh(index·TanhStep)/CellScale);
//   - cell: the stored c is a byte code κ in [−127, 127] on a μ-law grid (below), read
//     through CellDec[κ+128] (int16, in CellScale units, CellDec[0] = CellDec[1]);
//     u = f·CellDec[κ+128] + i·g, in CellScale/128 units, and t = u >> CellShift, the new
//     cell on a uniform grid of at most MaxCellRows steps over u's whole proven range;
//     κ' = CellEnc[t − CellLo], the code nearest the centre of t's step;
//   - hidden: h' = (o·TanhC[t − CellLo] + 64) >> 7 in [−127, 127], value h'/127, TanhC the
//     tanh of the centre of t's step times 127, rounded: h' does not pay the code's rounding;
//   - output (dense, tanh): acc = B + Σ W·h' in int32 (int16 weights per channel), z =
//     clamp((acc·Mult + 2^(Shift−1)) >> Shift, −OutHalf, OutHalf−1), y = OutTable[z+OutHalf]
//     in Q(OutFrac), round(2^OutFrac·tanh(z·OutScale)), exact per entry: a table, so the RL-CC
//     handler can fold its action → multiplier map into the same entries. The grid spans
//     ±min(calibrated max, OutClipMax): a trained policy saturates (rlcc_adpg_lstm's
//     pre-activation reaches beyond the 2.65 of an int8 grid on half its decisions, which
//     alone measured p50 |Δy| 0.009), and 1024 entries keep the wider grid's step below the
//     int8 one's.
//
// Every >> is arithmetic (flooring), as in the MLP path.
//
// The cell's grid. 48 bytes leave a byte for each of the 12 units' c, but a trained LSTM's
// cell spans a wide range: on rlcc_adpg_lstm |c| has a median of 0.47 and a max of 19.9, so
// a uniform int8 grid either saturates it (the 99.9th percentile, 10.7, max |Δy| 0.165) or
// rounds the common small cells coarsely. The code is μ-law instead: code κ is worth
// sign(κ)·CellMax·((1+μ)^(|κ|/127) − 1)/μ (uniform for μ = 0), CellMax the largest |c| on
// the calibration sequences, and μ the one of CellMus whose integer LSTM measures the least
// max |Δy| on them (then the fewest flips).
//
// Where the error comes from (issue 31, rlcc_adpg_lstm, a float emulation of Step with one
// rounding at a time left in, all else float; max |Δy| alone, p99 alone): x_t's grid 0.024,
// 0.012; the gates' index grid 0.030, 0.016; the sigmoid's /128 values 0.021, 0.008; the
// gates' weights 0.014, 0.007; c's byte code 0.031, 0.016; the new cell's grid 0.025, 0.015;
// TanhC 0.015, 0.008; h's byte 0.017, 0.010; inputs 0.004; output grid 0.005. They compound
// through the recurrent state: the emulation measures 0.059 with all of them, no one of them
// left float takes it below 0.056, and with only the state, inputs, g's values and output
// grid rounded it still measures 0.035. The state alone (h and c
// a byte each, μ-law c) measures 0.037; 7-bit h and a 9-bit c 0.040; 9 and 9 bits 0.017;
// 10 and 10 0.010; a per-unit CellMax 0.026 alone but no gain with the rest quantized.

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

// LaneBits is the width of one packed accumulator lane of the gates, PreLaneBits of the
// dense layer's; a LaneLayer's Lanes share a uint64.
const (
	LaneBits    = 21
	PreLaneBits = 32
)

// Table grids of the gates: σ over ±8 and tanh over ±4, 256 entries each.
const (
	SigStep  = 1.0 / 16
	TanhStep = 1.0 / 32
)

// PreMax is the top of x_t's grid, [0, PreMax]: its bits balance x_t's rounding against the
// gate weights' (a finer grid makes the weights coarser, since the lane bound is fixed); on
// rlcc_adpg_lstm, with 14-bit inputs and the 1024-entry output grid, [0, 511] measured max
// |Δy| 0.073 and 0.90% flips, [0, 767] 0.073 and 0.70%, [0, 1023] 0.056 and 0.56%; but the
// seed-2 LSTM (nicc train --arch lstm --seed 2) at [0, 1023] leaves nicc diff --closed-loop's
// tolerance at many-to-one:8 (mean queue latency −5.7%), at [0, 767] it passes at 8, 64 and
// 512 (0.033 and 0.96% open loop).
const PreMax = 767

// CellMus are the μ of the cell code's μ-law that LSTM tries (0: a uniform grid).
var CellMus = []float64{0, 4, 16, 64, 256}

// CellUnits is CellMax in CellScale units: the cell's fine unit, in which CellDec and GTable
// hold int16 values.
const CellUnits = 16383

// MaxCellRows bounds the new cell's grid (CellEnc and TanhC): each half of the C's cell
// table then lies within a 12-bit load offset of one pointer between them.
const MaxCellRows = 4096

// InBits is the most significant bits an input keeps after InShift.
const InBits = 14

// OutHalf is half the output grid's entries: z in [−OutHalf, OutHalf−1] indexes OutTable
// (and Fold) at z + OutHalf.
const OutHalf = 512

// OutClipMax bounds the output grid: tanh(OutClipMax) is 1 within 2^-16.
const OutClipMax = 6.0

// DefaultSeqLen is how many calibration rows make one sequence from a zero state.
const DefaultSeqLen = 32

// LSTMOptions control LSTM.
type LSTMOptions struct {
	// OutFrac is the output's fraction bits; 0 means DefaultOutFrac.
	OutFrac int
	// SeqLen cuts the calibration rows into sequences of this many steps, each from the zero
	// state; 0 means DefaultSeqLen.
	SeqLen int
}

// LaneLayer is a layer whose channels accumulate in packed lanes of Bits each: V_j = B[j] +
// Σ_i W[j][i]·v_i, proven in [−2^(Bits−1), 2^(Bits−1)).
type LaneLayer struct {
	In, Out, Bits int
	W             [][]int32
	// B includes the rounding half 2^(Shift[j]−1) of the index.
	B []int32
	// Shift is each channel's requantization: index = floor(V_j/2^Shift[j]).
	Shift []int
	// V is each channel's proven final sum.
	V []Interval
}

// LSTMIR is an integer recurrent policy; Step is its meaning.
type LSTMIR struct {
	Name      string
	ModelHash string
	Inputs    []Input
	InShift   []int
	OutFrac   int
	Hidden    int

	// Pre is the dense relu layer before the LSTM over the shifted inputs; x_t[j] =
	// clamp(floor(V_j/2^Pre.Shift[j]), 0, 127), worth PreScale[j] per step.
	Pre      LaneLayer
	PreScale []float64

	// Gates has 4·Hidden channels (i, f, g, o), over Pre.Out values of x_t then Hidden of h.
	Gates   LaneLayer
	Sigmoid []uint8 // 256 entries, [0, 128]
	GTable  []int16 // 256 entries, in CellScale units
	// The cell: CellDec (256 entries, by code + 128, monotone) is the value of a code in
	// CellScale units; t = u >> CellShift indexes CellEnc (the new code) and TanhC (127·tanh,
	// rounded) at t − CellLo.
	CellDec   []int16
	CellShift int
	CellLo    int64
	CellEnc   []int8
	TanhC     []int8
	CellScale float64
	CellMax   float64 // the value of code 127
	CellMu    float64

	// Out is the dense tanh output: int16 weights over h', int32 accumulator.
	OutW     []int16
	OutB     int32
	OutAcc   Interval
	OutMult  int32
	OutShift int
	OutScale float64 // one step of z
	OutTable []int32 // 256 entries, Q(OutFrac)
	// Fold, when set (FoldRLCC), is the RL-CC multiplier (Q16) of each OutTable entry: the
	// policy returns it instead of y.
	Fold      []uint32
	OutClip   float64  // 1 − tanh(grid end) when calibration saw pre-activations beyond it
	OutZ      Interval // the proven requantized z, before its clamp to [−128, 127]
	OutRange  Interval
	Fidelity  Fidelity
	SeqLen    int
	StateSpan string // what the state bytes hold, for reports
}

// StateBytes is the per-flow state the policy keeps: h and c's code at one byte each.
func (ir *LSTMIR) StateBytes() int { return 2 * ir.Hidden }

// StateWords is StateBytes in 32-bit context words.
func (ir *LSTMIR) StateWords() int { return (ir.StateBytes() + 3) / 4 }

// LSTM quantizes dense(relu) → LSTM → dense(tanh) with one output. inputs are the int32
// fixed-point formats of the model's inputs; calib are float input rows, run as sequences of
// opt.SeqLen steps from the zero state.
func LSTM(m *model.Model, inputs []Input, calib [][]float64, opt LSTMOptions) (*LSTMIR, error) {
	if err := checkLSTMShape(m); err != nil {
		return nil, err
	}
	if err := checkInputs(m, inputs); err != nil {
		return nil, err
	}
	outFrac := opt.OutFrac
	if outFrac == 0 {
		outFrac = DefaultOutFrac
	}
	if outFrac < 1 || outFrac > MaxOutFrac {
		return nil, fmt.Errorf("quantize: output fraction bits %d outside 1..%d", outFrac, MaxOutFrac)
	}
	seqLen := opt.SeqLen
	if seqLen == 0 {
		seqLen = DefaultSeqLen
	}
	if seqLen < 1 {
		return nil, fmt.Errorf("quantize: sequence length %d (want >= 1)", seqLen)
	}
	if err := checkCalib(calib, len(m.Inputs)); err != nil {
		return nil, err
	}
	hash, err := model.Hash(m)
	if err != nil {
		return nil, err
	}
	pre, cell, post := &m.Layers[0], &m.Layers[1], &m.Layers[2]
	H := cell.Out
	ir := &LSTMIR{Name: m.Name, ModelHash: hash, Inputs: slices.Clone(inputs), OutFrac: outFrac, Hidden: H, SeqLen: seqLen}

	// Calibration: the float model over the sequences, as the NIC sees the inputs.
	preMax := make([]float64, pre.Out)
	outMax := 0.0
	cMax := 0.0
	ir.InShift = make([]int, len(inputs))
	st := m.NewState()
	body := &model.Model{Inputs: m.Inputs, Layers: m.Layers[:2]} // to h
	for r, row := range calib {
		if r%seqLen == 0 {
			clear(st.H)
			clear(st.C)
		}
		x := representable(ir.Inputs, row)
		for j, v := range pre.Dense(x) {
			preMax[j] = max(preMax[j], v)
		}
		body.Eval(st, x)
		for _, c := range st.C {
			cMax = max(cMax, math.Abs(c))
		}
		outMax = max(outMax, math.Abs(dotBias(post, 0, st.H)))
	}

	// Inputs: at most InBits significant bits.
	step := make([]float64, len(inputs))
	rng := make([]Interval, len(inputs))
	for i, in := range inputs {
		w := max(bits.Len32(uint32(absI32(in.Min))), bits.Len32(uint32(absI32(in.Max))))
		ir.InShift[i] = max(0, w-InBits)
		rng[i] = Interval{ShiftRound(int64(in.Min), ir.InShift[i]), ShiftRound(int64(in.Max), ir.InShift[i])}
		step[i] = math.Ldexp(1, ir.InShift[i]-in.Frac)
	}

	// Pre: a channel's grid step is its calibrated max / PreMax, but at least 2^−18 of the
	// channel's worst case over the declared ranges (what a 21-bit lane holds at shift 0), so
	// that a unit calibration never turns on is not given a grid fine enough to make it
	// live for a sliver of the declared ranges.
	ir.PreScale = make([]float64, pre.Out)
	for j := range pre.Out {
		worst := 0.0
		if pre.B != nil {
			worst = math.Abs(pre.B[j])
		}
		for i, w := range pre.W[j] {
			worst += math.Abs(w) * max(math.Abs(inputs[i].Value(inputs[i].Min)), math.Abs(inputs[i].Value(inputs[i].Max)))
		}
		ir.PreScale[j] = max(preMax[j]/PreMax, math.Ldexp(worst, -(LaneBits-3)), 1e-300)
	}
	ir.Pre, err = laneLayer("dense layer 0", PreLaneBits, pre.W, pre.B, step, rng, ir.PreScale)
	if err != nil {
		return nil, err
	}

	// Gates over (x_t, h).
	gStep := make([]float64, 0, pre.Out+H)
	gRng := make([]Interval, 0, pre.Out+H)
	for j := range pre.Out {
		gStep = append(gStep, ir.PreScale[j])
		gRng = append(gRng, ir.Pre.Act(j))
	}
	for range H {
		gStep = append(gStep, 1.0/127)
		gRng = append(gRng, Interval{-128, 127}) // any byte a context may hold
	}
	gw := make([][]float64, 4*H)
	for r := range gw {
		gw[r] = slices.Concat(cell.W[r], cell.R[r])
	}
	gb := make([]float64, 4*H)
	for r := range gb {
		if cell.B != nil {
			gb[r] += cell.B[r]
		}
		if cell.RB != nil {
			gb[r] += cell.RB[r]
		}
	}
	grid := make([]float64, 4*H)
	for r := range grid {
		grid[r] = SigStep
		if r/H == 2 {
			grid[r] = TanhStep
		}
	}
	ir.Gates, err = laneLayer("lstm layer 1 gates", LaneBits, gw, gb, gStep, gRng, grid)
	if err != nil {
		return nil, err
	}

	// Output: int16 weights per channel over h' (step 1/127), int32 accumulator.
	if err := ir.output(post, outMax); err != nil {
		return nil, err
	}
	ir.Sigmoid = make([]uint8, 256)
	for k := range 256 {
		ir.Sigmoid[k] = uint8(math.Round(128 / (1 + math.Exp(-float64(k-128)*SigStep))))
	}
	// The cell's tables, for each μ; the best measured wins.
	var best *LSTMIR
	for _, mu := range CellMus {
		c := *ir
		c.cellTables(max(cMax, 1.0/64), mu)
		c.Fidelity = c.measure(m, calib)
		if b := best; b == nil || c.Fidelity.MaxAbs < b.Fidelity.MaxAbs ||
			c.Fidelity.MaxAbs == b.Fidelity.MaxAbs && c.Fidelity.Flips < b.Fidelity.Flips {
			best = &c
		}
	}
	return best, nil
}

// cellTables sets the g table and the cell's code (CellDec, CellEnc, TanhC and their grid)
// for a cell code spanning ±cellMax on a μ-law grid.
func (ir *LSTMIR) cellTables(cellMax, mu float64) {
	ir.CellMax, ir.CellMu = cellMax, mu
	ir.StateSpan = fmt.Sprintf("h[%d] then c[%d], a byte each: h int8, c a mu-law code (mu %g, code 127 worth %.4g)", ir.Hidden, ir.Hidden, mu, cellMax)
	ir.CellScale = cellMax / CellUnits
	ir.GTable = make([]int16, 256)
	for k := range 256 {
		ir.GTable[k] = int16(math.Round(math.Tanh(float64(k-128)*TanhStep) / ir.CellScale))
	}
	ir.CellDec = make([]int16, 256)
	dec := make([]float64, 256) // the codes' values in CellScale units, before rounding
	for k := range 256 {
		a := float64(min(max(k-128, -127), 127))
		v := math.Abs(a) / 127
		if mu > 0 {
			v = (math.Pow(1+mu, v) - 1) / mu
		}
		dec[k] = math.Copysign(v*CellUnits, a)
		ir.CellDec[k] = int16(math.Round(dec[k]))
	}
	// u = f·c + i·g over f, i in [0, 128], c and g in their tables; t = u >> CellShift.
	gLo, gHi := int64(slices.Min(ir.GTable)), int64(slices.Max(ir.GTable))
	uLo, uHi := 128*(min(int64(ir.CellDec[0]), 0)+min(gLo, 0)), 128*(max(int64(ir.CellDec[255]), 0)+max(gHi, 0))
	for ir.CellShift = 0; uHi>>ir.CellShift-uLo>>ir.CellShift+1 > MaxCellRows; ir.CellShift++ {
	}
	ir.CellLo = uLo >> ir.CellShift
	n := uHi>>ir.CellShift - ir.CellLo + 1
	ir.CellEnc, ir.TanhC = make([]int8, n), make([]int8, n)
	for k := range n {
		// the centre of t's step, in CellScale units
		v := (math.Ldexp(float64(k+ir.CellLo), ir.CellShift) + math.Ldexp(1, ir.CellShift-1)) / 128
		ir.TanhC[k] = int8(math.Round(127 * math.Tanh(v*ir.CellScale)))
		c := min(max(sort.SearchFloat64s(dec, v), 2), 255) // the nearer of c−1 and c, dec[c−1] < v <= dec[c] within the codes
		if v-dec[c-1] <= dec[c]-v {
			c--
		}
		ir.CellEnc[k] = int8(c - 128)
	}
}

// CellValue is the value of cell code κ.
func (ir *LSTMIR) CellValue(code int32) float64 {
	return float64(ir.CellDec[min(max(code, -128), 127)+128]) * ir.CellScale
}

// checkLSTMShape accepts dense(relu) → lstm → dense(tanh, 1 output) with finite weights.
func checkLSTMShape(m *model.Model) error {
	if m == nil || m.Ensemble != nil {
		return fmt.Errorf("quantize: LSTM needs a network")
	}
	ls := m.Layers
	if len(ls) != 3 || ls[0].Op != model.OpDense || ls[0].Act != model.ActReLU || ls[1].Op != model.OpLSTM ||
		ls[2].Op != model.OpDense || ls[2].Act != model.ActTanh || ls[2].Out != 1 {
		var shape []string
		for _, l := range ls {
			s := l.Op.String()
			if l.Op == model.OpDense {
				s += "(" + l.Act.String() + ")"
			}
			shape = append(shape, fmt.Sprintf("%s %d->%d", s, l.In, l.Out))
		}
		return fmt.Errorf("quantize: the int8 LSTM path takes dense(relu) -> lstm -> dense(tanh) with one output; the model is %v", shape)
	}
	if ls[0].In != len(m.Inputs) || ls[1].In != ls[0].Out || ls[2].In != ls[1].Out {
		return fmt.Errorf("quantize: layer shapes do not chain")
	}
	if ls[0].In > 64 || ls[0].Out > 64 || ls[1].Out > 64 {
		return fmt.Errorf("quantize: the int8 LSTM path takes at most 64 inputs, 64 dense units and 64 hidden units")
	}
	for k := range ls {
		l := &ls[k]
		check := func(what string, rows [][]float64, want int) error {
			for j, row := range rows {
				if len(row) != want {
					return fmt.Errorf("quantize: layer %d %s row %d has %d values, want %d", k, what, j, len(row), want)
				}
				for i, w := range row {
					if !finite(w) {
						return fmt.Errorf("quantize: layer %d %s [%d][%d] is %v", k, what, j, i, w)
					}
				}
			}
			return nil
		}
		wantRows := l.Out
		if l.Op == model.OpLSTM {
			wantRows = 4 * l.Out
			if len(l.R) != wantRows {
				return fmt.Errorf("quantize: layer %d has %d recurrent rows, want %d", k, len(l.R), wantRows)
			}
			if err := check("recurrent weight", l.R, l.Out); err != nil {
				return err
			}
		}
		if len(l.W) != wantRows {
			return fmt.Errorf("quantize: layer %d has %d weight rows, want %d", k, len(l.W), wantRows)
		}
		if err := check("weight", l.W, l.In); err != nil {
			return err
		}
		for _, b := range [][]float64{l.B, l.RB} {
			if b != nil && len(b) != wantRows {
				return fmt.Errorf("quantize: layer %d has %d biases, want %d", k, len(b), wantRows)
			}
			if err := check("bias", [][]float64{b}, len(b)); err != nil {
				return err
			}
		}
	}
	return nil
}

// laneLayer quantizes rows w (Out×In) and biases b for inputs of the given steps and integer
// ranges into packed lanes of laneBits: channel j's sum is in units grid[j]/2^n_j, n_j in
// 0..laneBits−1 the largest at which its final sum, bias rounding half included, is proven in
// the lane, [−2^(laneBits−1), 2^(laneBits−1)).
func laneLayer(what string, laneBits int, w [][]float64, b []float64, step []float64, rng []Interval, grid []float64) (LaneLayer, error) {
	l := LaneLayer{In: len(step), Out: len(w), Bits: laneBits, W: make([][]int32, len(w)), B: make([]int32, len(w)), V: make([]Interval, len(w)), Shift: make([]int, len(w))}
	laneHalf := l.half()
	for j, row := range w {
		bias := 0.0
		if b != nil {
			bias = b[j]
		}
		var last Interval
		ok := false
		for n := laneBits - 1; n >= 0 && !ok; n-- {
			u := math.Ldexp(grid[j], -n)
			bq := math.Round(bias/u) + float64(half(n))
			ok = math.Abs(bq) < float64(laneHalf)
			v := Interval{int64(bq), int64(bq)}
			q := make([]int32, len(row))
			for i, x := range row {
				if rng[i] == (Interval{}) {
					continue // the input is always 0: its weight is 0, exactly
				}
				f := math.Round(x * step[i] / u)
				if !ok || math.Abs(f) >= float64(laneHalf) {
					ok = false
					break
				}
				q[i] = int32(f)
				p, r := int64(q[i])*rng[i].Lo, int64(q[i])*rng[i].Hi
				v.Lo += min(p, r)
				v.Hi += max(p, r)
			}
			if ok && v.Lo >= -laneHalf && v.Hi < laneHalf {
				l.W[j], l.B[j], l.V[j], l.Shift[j] = q, int32(bq), v, n
			} else {
				ok, last = false, v
			}
		}
		if !ok {
			return LaneLayer{}, fmt.Errorf("quantize: %s channel %d: its sum [%d, %d] does not fit a %d-bit lane even at the coarsest grid; the declared input ranges are too wide for the int8 LSTM path",
				what, j, last.Lo, last.Hi, laneBits)
		}
	}
	return l, nil
}

// output quantizes the final dense tanh over h' (step 1/127): int16 weights per channel, an
// int32 accumulator, a grid of 2·OutHalf entries spanning ±min(calibrated max, OutClipMax).
func (ir *LSTMIR) output(post *model.Layer, outMax float64) error {
	step := make([]float64, ir.Hidden)
	for i := range step {
		step[i] = 1.0 / 127
	}
	q, ws := quantRow(post.W[0], step, 32767)
	ir.OutW = q
	bias := 0.0
	if post.B != nil {
		bias = post.B[0]
	}
	b := math.Round(bias / ws)
	if !(b >= math.MinInt32/2 && b <= math.MaxInt32/2) {
		return fmt.Errorf("quantize: output bias %g does not fit int32 at scale %g", bias, ws)
	}
	ir.OutB = int32(b)
	rng := make([]Interval, ir.Hidden)
	for i := range rng {
		rng[i] = Interval{-127, 127}
	}
	ir.OutAcc = partialSums(q, int64(ir.OutB), rng)
	if ir.OutAcc.Lo < math.MinInt32 || ir.OutAcc.Hi > math.MaxInt32 {
		return fmt.Errorf("quantize: output accumulator range [%d, %d] does not fit int32", ir.OutAcc.Lo, ir.OutAcc.Hi)
	}
	span := min(outMax, OutClipMax)
	if span <= 0 {
		span = OutClipMax
	}
	ir.OutScale = span / (OutHalf - 1)
	bound := max(-ir.OutAcc.Lo, ir.OutAcc.Hi, 1)
	ir.OutMult, ir.OutShift = multiplier(ws/ir.OutScale, min(math.MaxInt32, (int64(1)<<62)/bound))
	if ir.OutMult < 1<<15 {
		return fmt.Errorf("quantize: output accumulator bound %d leaves a %d-bit requantization multiplier", bound, bits.Len32(uint32(ir.OutMult)))
	}
	ir.OutTable = make([]int32, 2*OutHalf)
	for k := range 2 * OutHalf {
		ir.OutTable[k] = int32(math.Round(math.Ldexp(math.Tanh(float64(k-OutHalf)*ir.OutScale), ir.OutFrac)))
	}
	if outMax > span {
		ir.OutClip = 1 - math.Tanh(span)
	}
	ir.OutZ = Interval{Requant(ir.OutAcc.Lo, ir.OutMult, ir.OutShift), Requant(ir.OutAcc.Hi, ir.OutMult, ir.OutShift)}
	zl, zh := min(max(ir.OutZ.Lo, -OutHalf), OutHalf-1), min(max(ir.OutZ.Hi, -OutHalf), OutHalf-1)
	ir.OutRange = Interval{int64(ir.OutTable[zl+OutHalf]), int64(ir.OutTable[zh+OutHalf])}
	return nil
}

func absI32(v int32) int64 { return max(int64(v), -int64(v)) }

// Trace is one step's integer values, for reports and the per-layer diff: x_t, the gate
// table indices, c', h' and the output grid value z.
type Trace struct {
	Pre, Gate, C, H []int32
	Z               int32
}

// Step is the golden model of one decision: x holds one raw int32 per input (clamped to its
// declared range); state holds StateWords words, h then c's code as bytes little endian, read
// and replaced by the new h', c'. It returns y in Q(OutFrac).
func (ir *LSTMIR) Step(x []int32, state []uint32) int32 {
	y, _ := ir.step(x, state, false)
	return y
}

// StepTrace is Step with the intermediate values.
func (ir *LSTMIR) StepTrace(x []int32, state []uint32) (int32, *Trace) {
	return ir.step(x, state, true)
}

func (ir *LSTMIR) step(x []int32, state []uint32, trace bool) (int32, *Trace) {
	if len(x) != len(ir.Inputs) || len(state) < ir.StateWords() {
		panic(fmt.Sprintf("quantize: LSTMIR.Step got %d inputs and %d state words, want %d and %d", len(x), len(state), len(ir.Inputs), ir.StateWords()))
	}
	H := ir.Hidden
	v := make([]int64, len(x))
	for i, in := range ir.Inputs {
		v[i] = ShiftRound(int64(min(max(x[i], in.Min), in.Max)), ir.InShift[i])
	}
	in := make([]int64, 0, ir.Pre.Out+H)
	for j := range ir.Pre.Out {
		in = append(in, min(max(ir.Pre.Sum(j, v)>>ir.Pre.Shift[j], 0), PreMax))
	}
	for k := range H {
		in = append(in, int64(stateByte(state, k)))
	}
	idx := make([]int64, 4*H)
	for r := range idx {
		idx[r] = min(max(ir.Gates.Sum(r, in)>>ir.Gates.Shift[r], -128), 127)
	}
	var t *Trace
	if trace {
		t = &Trace{}
		for _, p := range in[:ir.Pre.Out] {
			t.Pre = append(t.Pre, int32(p))
		}
		for _, g := range idx {
			t.Gate = append(t.Gate, int32(g))
		}
	}
	acc := int64(ir.OutB)
	for j := range H {
		i := int64(ir.Sigmoid[idx[j]+128])
		f := int64(ir.Sigmoid[idx[H+j]+128])
		g := int64(ir.GTable[idx[2*H+j]+128])
		o := int64(ir.Sigmoid[idx[3*H+j]+128])
		c := int64(ir.CellDec[int(stateByte(state, H+j))+128])
		k := (f*c+i*g)>>ir.CellShift - ir.CellLo
		cn := int64(ir.CellEnc[k])
		hn := (o*int64(ir.TanhC[k]) + 64) >> 7
		setStateByte(state, j, int8(hn))
		setStateByte(state, H+j, int8(cn))
		acc += int64(ir.OutW[j]) * hn
		if trace {
			t.C, t.H = append(t.C, int32(cn)), append(t.H, int32(hn))
		}
	}
	z := min(max(Requant(acc, ir.OutMult, ir.OutShift), -OutHalf), OutHalf-1)
	if trace {
		t.Z = int32(z)
	}
	return ir.OutTable[z+OutHalf], t
}

// Lanes is how many lanes share a packed word.
func (l *LaneLayer) Lanes() int { return 64 / l.Bits }

// half is a lane's offset, 2^(Bits−1): a lane holds V + half.
func (l *LaneLayer) half() int64 { return int64(1) << (l.Bits - 1) }

// Groups is how many packed words the layer's channels take, Lanes to a word.
func (l *LaneLayer) Groups() int { return (l.Out + l.Lanes() - 1) / l.Lanes() }

// Pack is the layer as the firmware holds it, input-major: the Groups packed biases (each
// lane's B + 2^(Bits−1), an unused lane 2^(Bits−1)), then for each input the Groups packed
// weight words (lane l of word g holds W[Lanes·g + l][i] at bit Bits·l, two's complement,
// mod 2^64).
func (l *LaneLayer) Pack() []uint64 {
	groups, lanes := l.Groups(), l.Lanes()
	words := make([]uint64, groups*(1+l.In))
	for j := range groups * lanes {
		g, sh := j/lanes, uint(l.Bits*(j%lanes))
		if j >= l.Out {
			words[g] += uint64(l.half()) << sh
			continue
		}
		words[g] += uint64(int64(l.B[j])+l.half()) << sh
		for i := range l.In {
			words[groups*(1+i)+g] += uint64(int64(l.W[j][i])) << sh
		}
	}
	return words
}

// PackedSums computes every channel's V the firmware's way: each group's word starts at its
// packed bias, adds v_i times the packed weight word of each input i, wrapping mod 2^64, and
// lane l of the result, less 2^(Bits−1), is channel Lanes·g + l's V. It equals Sum for every
// v in the layer's input ranges (the lane proof); a test fuzzes that.
func (l *LaneLayer) PackedSums(words []uint64, v []int64) []int64 {
	groups := l.Groups()
	out := make([]int64, l.Out)
	for g := range groups {
		acc := words[g]
		for i := range l.In {
			acc += uint64(v[i]) * words[groups*(1+i)+g]
		}
		for lane := range l.Lanes() {
			if j := g*l.Lanes() + lane; j < l.Out {
				out[j] = int64(acc>>(l.Bits*lane)&(1<<l.Bits-1)) - l.half()
			}
		}
	}
	return out
}

// Act is the proven range of the dense layer's channel j after its relu and clamp,
// clamp(floor(V_j/2^Shift[j]), 0, PreMax): [0, 0] for a unit that no input turns on.
func (l *LaneLayer) Act(j int) Interval {
	v, n := l.V[j], l.Shift[j]
	return Interval{min(max(v.Lo>>n, 0), PreMax), min(max(v.Hi>>n, 0), PreMax)}
}

// Sum is channel j's exact V = B + Σ W·v, in int64.
func (l *LaneLayer) Sum(j int, v []int64) int64 {
	s := int64(l.B[j])
	for i, w := range l.W[j] {
		s += int64(w) * v[i]
	}
	return s
}

func stateByte(state []uint32, k int) int8 { return int8(state[k/4] >> (8 * (k % 4))) }

func setStateByte(state []uint32, k int, v int8) {
	sh := 8 * (k % 4)
	state[k/4] = state[k/4]&^(0xff<<sh) | uint32(uint8(v))<<sh
}

// OutValue is y / 2^OutFrac.
func (ir *LSTMIR) OutValue(y int32) float64 { return math.Ldexp(float64(y), -ir.OutFrac) }

// measure runs the integer and the float model side by side over the calibration sequences,
// each with its own state: the error includes the drift of the int8 state.
func (ir *LSTMIR) measure(m *model.Model, calib [][]float64) Fidelity {
	f := Fidelity{Rows: len(calib)}
	run := ir.Runner(m)
	flips := 0
	for r, row := range calib {
		yq, yf := run(r, row)
		f.MaxAbs = max(f.MaxAbs, math.Abs(yq-yf))
		if rlcc.DirectionOf(yq) != rlcc.DirectionOf(yf) {
			flips++
		}
	}
	f.Flips = float64(flips) / float64(len(calib))
	return f
}

// Runner steps the integer LSTM and the float model m side by side, each with its own state,
// over rows taken as sequences of SeqLen from the zero state: called with the rows in order
// (k from 0), it returns y_int and y_float for row k, the float model fed the row as the NIC
// sees it (quantized to the input formats, clamped).
func (ir *LSTMIR) Runner(m *model.Model) func(k int, row []float64) (yInt, yFloat float64) {
	st := m.NewState()
	state := make([]uint32, ir.StateWords())
	raw := make([]int32, len(ir.Inputs))
	return func(k int, row []float64) (float64, float64) {
		if k%ir.SeqLen == 0 {
			clear(st.H)
			clear(st.C)
			clear(state)
		}
		for i, in := range ir.Inputs {
			raw[i] = in.Quantize(row[i])
		}
		return ir.OutValue(ir.Step(raw, state)), m.Eval(st, representable(ir.Inputs, row))[0]
	}
}

// dotBias is row j's W·x + B, the pre-activation.
func dotBias(l *model.Layer, j int, x []float64) float64 {
	s := 0.0
	if l.B != nil {
		s = l.B[j]
	}
	for i, w := range l.W[j] {
		s += w * x[i]
	}
	return s
}
