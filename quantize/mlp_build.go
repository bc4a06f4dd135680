package quantize

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/nicc-dev/nicc/model"
)

// Building an MLPIR (MLP): the shape check, calibration, the input shifts, and each
// layer's weights, proofs and requantization.

// checkMLPShape refuses a network the integer MLP path cannot take: anything but dense relu,
// tanh and identity layers that chain, finite weights and biases, and one output.
func checkMLPShape(m *model.Model) error {
	for k, l := range m.Layers {
		if l.Op != model.OpDense {
			return fmt.Errorf("quantize: layer %d is %s; the int8 MLP path takes dense layers only", k, l.Op)
		}
		switch l.Act {
		case model.ActReLU, model.ActTanh, model.ActIdentity:
		default:
			return fmt.Errorf("quantize: layer %d activation %s is not supported (relu, tanh, identity)", k, l.Act)
		}
		want := len(m.Inputs)
		if k > 0 {
			want = m.Layers[k-1].Out
		}
		if l.In != want || l.Out < 1 || len(l.W) != l.Out || (l.B != nil && len(l.B) != l.Out) {
			return fmt.Errorf("quantize: layer %d shape does not chain (in %d, want %d)", k, l.In, want)
		}
		for j, row := range l.W {
			if len(row) != l.In {
				return fmt.Errorf("quantize: layer %d row %d has %d weights, want %d", k, j, len(row), l.In)
			}
			for i, w := range row {
				if !finite(w) {
					return fmt.Errorf("quantize: layer %d weight [%d][%d] is %v", k, j, i, w)
				}
			}
		}
		for j, b := range l.B {
			if !finite(b) {
				return fmt.Errorf("quantize: layer %d bias %d is %v", k, j, b)
			}
		}
	}
	if n := m.NumOutputs(); n != 1 {
		return fmt.Errorf("quantize: MLP has %d outputs, want 1", n)
	}
	if n := m.NumOutputs(); n != 1 {
		return fmt.Errorf("quantize: MLP has %d outputs, want 1", n)
	}
	return nil
}

// calibrateMLP runs the float network on each calibration row as the NIC sees it (quantized
// to the input formats, clamped to range): the max |pre-activation| of each layer (relu: the
// max positive part), and of each channel.
func calibrateMLP(m *model.Model, inputs []Input, calib [][]float64) (maxAbs []float64, chMax [][]float64, err error) {
	maxAbs = make([]float64, len(m.Layers))
	chMax = make([][]float64, len(m.Layers))
	for k, l := range m.Layers {
		chMax[k] = make([]float64, l.Out)
	}
	for _, row := range calib {
		x := representable(inputs, row)
		for k := range m.Layers {
			l := &m.Layers[k]
			y := make([]float64, l.Out)
			for j := range l.Out {
				s := 0.0
				for i, w := range l.W[j] {
					s += w * x[i]
				}
				if l.B != nil {
					s += l.B[j]
				}
				if !finite(s) {
					return nil, nil, fmt.Errorf("quantize: layer %d channel %d: a calibration pre-activation is %v: the weights overflow float64", k, j, s)
				}
				a := math.Abs(s)
				if l.Act == model.ActReLU {
					a = max(s, 0)
				}
				maxAbs[k] = max(maxAbs[k], a)
				chMax[k][j] = max(chMax[k][j], a)
				y[j] = activate(l.Act, s)
			}
			x = y
		}
	}
	return maxAbs, chMax, nil
}

// fitInputShifts sets InShift: with int8 weights (wide false), the inputs as wide as the first
// layer's int32 accumulator proof allows: from the raw values (shift 0), the widest input
// shifted right by one bit until every channel's accumulator range fits int32. With int16
// weights (wide), raw (int64 widening). It returns the first layer's input grid.
func (ir *MLPIR) fitInputShifts(first *model.Layer, wide bool, wmax float64) ([]Interval, []float64, error) {
	ir.InShift = make([]int, len(ir.Inputs))
	for {
		rng, step := ir.inputGrid()
		if wide || fitsInt32(first, rng, step, wmax) {
			return rng, step, nil
		}
		w, wi := int64(-1), 0
		for i, r := range rng {
			if a := max(-r.Lo, r.Hi); a > w {
				w, wi = a, i
			}
		}
		if w <= 1 {
			return nil, nil, fmt.Errorf("quantize: layer 0 accumulator does not fit int32 even with 1-bit inputs")
		}
		ir.InShift[wi]++
	}
}

// mlpBuild is what quantizing each layer needs: the options in force and the calibration.
type mlpBuild struct {
	ir                             *MLPIR
	opt                            MLPOptions
	actBits, wbits, tbits, outFrac int
	clip, wmax                     float64
	maxAbs                         []float64
	chMax                          [][]float64
	// means is the calibration mean of each layer's float inputs (MLPOptions.Packed only).
	means [][]float64
	// unitScale and unitShift, under MLPOptions.UnitOutput once unitLayer has set them, are
	// the scale of every channel of the layer before the final one, and the final
	// requantization's shift: the final grid's step is unitScale·2^unitShift.
	unitScale float64
	unitShift int
}

// layer quantizes layer k (l, the last when final) over its input grid (rng, step): weights,
// biases, accumulator proofs and requantization, its activation's table or clamp. It returns
// the layer and the next layer's input grid; the last layer sets the IR's output range.
func (b *mlpBuild) layer(k int, l *model.Layer, final bool, rng []Interval, step []float64) (MLPLayer, []Interval, []float64, error) {
	ql := MLPLayer{In: l.In, Out: l.Out, Act: actOf(l.Act), Final: final, InRange: rng, InStep: step,
		W: make([][]int16, l.Out), AccBits: 32, B: make([]int32, l.Out), Mult: make([]int32, l.Out), Shift: make([]int, l.Out),
		Acc: make([]Interval, l.Out), Z: make([]Interval, l.Out), WScale: make([]float64, l.Out)}
	var qmax int64
	qmax, ql.Bits, ql.OutScale = b.grid(k, l, final)
	ql.ZScale = make([]float64, l.Out)
	for j := range l.Out {
		ql.ZScale[j] = ql.OutScale
		switch {
		case b.unitScale > 0 && !final:
			ql.ZScale[j] = b.unitScale
		case b.opt.ChannelScales && !final && l.Act != model.ActTanh && b.chMax[k][j] > 0:
			ql.ZScale[j] = b.chMax[k][j] / float64(qmax)
		}
	}
	if b.opt.Packed && !final {
		ql.LaneBits = b.laneBits(rng)
	}
	for j := range l.Out {
		if b.unitScale > 0 && final {
			if err := b.unitChannel(&ql, k, j, l, rng); err != nil {
				return ql, nil, nil, err
			}
			continue
		}
		if b.opt.Packed && !final {
			if err := b.shiftChannel(&ql, k, j, l, step, rng); err != nil {
				return ql, nil, nil, err
			}
			continue
		}
		ql.W[j], ql.WScale[j] = quantRow(l.W[j], step, b.wmax)
		ws := ql.WScale[j]
		if l.B != nil {
			b := math.Round(l.B[j] / ws)
			if !(b >= math.MinInt32 && b <= math.MaxInt32) {
				return ql, nil, nil, fmt.Errorf("quantize: layer %d bias %d = %g does not fit int32 at scale %g", k, j, l.B[j], ws)
			}
			ql.B[j] = int32(b)
		}
		acc := partialSums(ql.W[j], int64(ql.B[j]), rng)
		if acc.Lo < math.MinInt32 || acc.Hi > math.MaxInt32 {
			if b.wbits == 8 {
				return ql, nil, nil, fmt.Errorf("quantize: layer %d channel %d accumulator range [%d, %d] does not fit int32", k, j, acc.Lo, acc.Hi)
			}
			ql.AccBits = 64
		}
		ql.Acc[j] = acc
		bound := max(-acc.Lo, acc.Hi, 1)
		mult, sh := multiplier(ws/ql.ZScale[j], min(math.MaxInt32, (int64(1)<<62)/bound))
		if mult < 1<<15 {
			return ql, nil, nil, fmt.Errorf("quantize: layer %d channel %d: accumulator bound %d leaves a %d-bit requantization multiplier", k, j, bound, bits.Len32(uint32(mult)))
		}
		if bound > (math.MaxInt64-(int64(1)<<(sh-1)))/int64(mult) {
			return ql, nil, nil, fmt.Errorf("quantize: layer %d channel %d requantization overflows int64", k, j)
		}
		ql.Mult[j], ql.Shift[j] = mult, sh
		ql.Z[j] = Interval{Requant(acc.Lo, mult, sh), Requant(acc.Hi, mult, sh)}
	}
	// The next layer's input range.
	next := make([]Interval, l.Out)
	nstep := make([]float64, l.Out)
	switch {
	case final && l.Act == model.ActTanh:
		ql.tanhTable(b.outFrac, b.maxAbs[k])
		zl, zh := min(max(ql.Z[0].Lo, -qmax-1), qmax), min(max(ql.Z[0].Hi, -qmax-1), qmax)
		b.ir.Out = Interval{int64(ql.Lookup(ql.OutTable, zl)), int64(ql.Lookup(ql.OutTable, zh))}
	case final:
		lo, hi := ql.Z[0].Lo, ql.Z[0].Hi
		if l.Act == model.ActReLU {
			lo, hi = max(lo, 0), max(hi, 0)
		}
		if lo < math.MinInt32 || hi > math.MaxInt32 {
			return ql, nil, nil, fmt.Errorf("quantize: output range [%d, %d] does not fit int32", lo, hi)
		}
		b.ir.Out = Interval{lo, hi}
	case l.Act == model.ActTanh:
		ql.Table = make([]int8, 256)
		for z := -128; z < 128; z++ {
			ql.Table[z+128] = int8(math.Round(127 * math.Tanh(float64(z)*ql.OutScale)))
		}
		for j := range l.Out {
			zl, zh := max(ql.Z[j].Lo, -128), min(ql.Z[j].Hi, 127)
			zl, zh = min(zl, 127), max(zh, -128)
			next[j] = Interval{int64(ql.Table[zl+128]), int64(ql.Table[zh+128])}
			nstep[j] = 1.0 / 127
		}
	default:
		lo := -qmax - 1
		ql.Open = b.opt.Packed && b.opt.OpenReLU && l.Act == model.ActReLU
		if l.Act == model.ActReLU {
			lo = 0
		}
		for j := range l.Out {
			top := ql.ReluTop(j)
			next[j] = Interval{min(max(ql.Z[j].Lo, lo), top), min(max(ql.Z[j].Hi, lo), top)}
			nstep[j] = ql.ZScale[j]
		}
	}
	return ql, next, nstep, nil
}

// grid is layer k's output grid: its top qmax (127 or 32767), its width in bits (8, 16, or
// 32 for a final relu or identity in Q(OutFrac)) and its scale.
func (b *mlpBuild) grid(k int, l *model.Layer, final bool) (qmax int64, bits int, scale float64) {
	qmax, bits = 127, 8
	if (!final && l.Act != model.ActTanh && b.actBits == 16) || (final && l.Act == model.ActTanh && b.tbits == 16) {
		qmax, bits = 32767, 16
	}
	span := b.maxAbs[k]
	switch {
	case final && l.Act == model.ActTanh:
		span = min(span, b.clip)
	case l.Act == model.ActTanh:
		span = min(span, HiddenTanhClip)
	}
	switch {
	case final && l.Act != model.ActTanh:
		return qmax, 32, math.Ldexp(1, -b.outFrac)
	case span > 0:
		return qmax, bits, span / float64(qmax)
	}
	return qmax, bits, 1 / float64(qmax)
}

// fitsInt32 reports whether every channel's partial sums of l fit int32 on this input grid,
// ignoring biases (MLP checks them with the rest).
func fitsInt32(l *model.Layer, rng []Interval, step []float64, wmax float64) bool {
	for j := range l.Out {
		w, _ := quantRow(l.W[j], step, wmax)
		acc := partialSums(w, 0, rng)
		if acc.Lo < math.MinInt32 || acc.Hi > math.MaxInt32 {
			return false
		}
	}
	return true
}

// quantRow is one output channel's weights as symmetric integers in [−wmax, wmax] (127 or
// 32767) over the input steps, and the channel's scale max |w·step| / wmax (1 for a zero row).
func quantRow(row, step []float64, wmax float64) ([]int16, float64) {
	ma := 0.0
	for i, w := range row {
		ma = max(ma, math.Abs(w*step[i]))
	}
	ws := 1.0
	if ma > 0 {
		ws = ma / wmax
	}
	q := make([]int16, len(row))
	for i, w := range row {
		q[i] = int16(max(-wmax, min(wmax, math.Round(w*step[i]/ws))))
	}
	return q, ws
}

// partialSums is the range of every partial sum b + Σ_{i<k} w_i·x_i and every term w_i·x_i,
// x_i in rng[i]. Each
// bound is at most 2^31 + 4096·2^15·2^31 < 2^63 in magnitude (int32 inputs, int16 weights, at
// most 4096 inputs): no int64 overflow.
func partialSums(w []int16, b int64, rng []Interval) Interval {
	lo, hi := b, b
	acc := Interval{lo, hi}
	for i, wi := range w {
		p, q := int64(wi)*rng[i].Lo, int64(wi)*rng[i].Hi
		lo += min(p, q)
		hi += max(p, q)
		// The term itself too: C computes w·x before adding it.
		acc.Lo, acc.Hi = min(acc.Lo, lo, p, q), max(acc.Hi, hi, p, q)
	}
	return acc
}

// multiplier is (m, n) with m/2^n ≈ r: n in 1..62 the largest with round(r·2^n) ≤ maxM
// (maxM ≤ 2^31−1), so m is as precise as the bound allows.
func multiplier(r float64, maxM int64) (int32, int) {
	n := 62
	for n > 1 && math.Round(math.Ldexp(r, n)) > float64(maxM) {
		n--
	}
	m := math.Round(math.Ldexp(r, n))
	m = max(1, min(m, float64(maxM)))
	return int32(m), n
}
