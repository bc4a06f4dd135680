package quantize

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/model"
)

// Packed lanes of a shift-requantized layer (MLPOptions.Packed).
//
// The channels of a hidden layer whose requantization is a shift (Mult 1) share uint64s in
// groups of 64/b lanes of b bits (MLPLayer.LaneBits): two 32-bit lanes for int16 weights or
// int32 inputs, three 21-bit lanes for int8 weights over int8 inputs, where a product is
// below 2^14 in magnitude. Lane m of a group holds channel c_m at bit b·m: P = C + Σ_i v_i·Wi
// mod 2^64, with C = Σ_m 2^(b·m)·(B_m + 2^(n_m−1) + o_m) and Wi = Σ_m 2^(b·m)·W_mi (two's
// complement, mod 2^64), where the offset o_m is 2^(b−1) for every lane but the top one
// (m = 64/b − 1), 0 for it. When every sum A_m = B_m + Σ W_mi·v_i + 2^(n_m−1) is proven in
// [−2^(b−1), 2^(b−1)), each lower lane holds A_m + 2^(b−1) in [0, 2^b), so no lane borrows
// from the one above, and the top lane is A_top signed: P is exactly Σ_m 2^(b·m)·(A_m + o_m)
// as a signed 64-bit integer, whatever the partial sums did on the way (arithmetic mod 2^64
// commutes with the sum). So z_top = P >> (b·m + n), arithmetic, and a lower lane's
// z_m = ((P >> (b·m)) mod 2^b − 2^(b−1)) >> n_m are the golden model's (acc + 2^(n−1)) >> n.
// Only the final sums are proven; the golden model computes each in int64. The LSTM's gates
// (LaneLayer) pack the same way, every lane offset.

// packedInWeightMax is the first layer's weight magnitude MLP shifts the inputs for under
// MLPOptions.Packed, whatever WeightBits (as int8 weights do with 127): the inputs lose bits until weights of this
// size prove int32 accumulators. A lane holds the product of a weight and an input, so this
// splits its bits between them: on the shipped teacher, raw inputs leave 7-bit weights for the
// observation (max |Δy| 0.039), ±8191 measures 0.0042 and ±32767 (8-bit shifts) 0.0050.
const packedInWeightMax = 8191

// PairLaneBits is the width of the lanes of a packed pair, TripleLaneBits of a packed
// triple (int8 weights over int8 inputs).
const (
	PairLaneBits   = 32
	TripleLaneBits = 21
)

// Lanes is how many of a packed layer's channels share a uint64.
func (l *MLPLayer) Lanes() int { return 64 / l.LaneBits }

// Packable reports why channel j of l cannot take a packed lane (nil when it can): it must be
// a hidden channel of a packed layer requantized by a shift alone whose accumulator, rounding
// half included, is proven in [−2^(b−1), 2^(b−1)), b = l.LaneBits.
func (l *MLPLayer) Packable(j int) error {
	if l.Final || l.Mult[j] != 1 || l.LaneBits == 0 {
		return fmt.Errorf("quantize: channel %d is requantized by a multiply, not a shift", j)
	}
	a, top := l.Acc[j], int64(1)<<(l.LaneBits-1)
	if h := half(l.Shift[j]); a.Lo+h < -top || a.Hi+h >= top {
		return fmt.Errorf("quantize: channel %d accumulator [%d, %d] plus its rounding %d does not fit a %d-bit lane", j, a.Lo, a.Hi, h, l.LaneBits)
	}
	return nil
}

// PackGroup is the packed bias word and one weight word per input of the channels chans, at
// most Lanes, lane m holding chans[m].
func (l *MLPLayer) PackGroup(chans []int) (bias uint64, w []uint64) {
	w = make([]uint64, l.In)
	for m, c := range chans {
		sh := uint(l.LaneBits * m)
		b := int64(l.B[c]) + half(l.Shift[c])
		if m < l.Lanes()-1 {
			b += int64(1) << (l.LaneBits - 1)
		}
		bias += uint64(b) << sh
		for i := range l.In {
			w[i] += uint64(int64(l.W[c][i])) << sh
		}
	}
	return bias, w
}

// GroupZ is what the firmware computes from a packed group over the inputs v: each lane's
// requantized z (before the activation's clamp), lane m shifted by shifts[m].
func (l *MLPLayer) GroupZ(bias uint64, w []uint64, v []int64, shifts []int) []int64 {
	p := bias
	for i, x := range v {
		p += uint64(x) * w[i]
	}
	z := make([]int64, len(shifts))
	for m, n := range shifts {
		sh := l.LaneBits * m
		if m == l.Lanes()-1 {
			z[m] = int64(p) >> (sh + n)
			continue
		}
		z[m] = (int64(p>>sh&(1<<l.LaneBits-1)) - int64(1)<<(l.LaneBits-1)) >> n
	}
	return z
}

// laneBits is the lane width of packed hidden layer k over inputs rng: three 21-bit lanes
// to a word when its weights are int8 and its inputs too, else two 32-bit ones.
func (b *mlpBuild) laneBits(rng []Interval) int {
	for _, r := range rng {
		if b.wbits != 8 || r.Lo < math.MinInt8 || r.Hi > math.MaxInt8 {
			return PairLaneBits
		}
	}
	return TripleLaneBits
}

// shiftChannel quantizes hidden channel j of layer k (MLPOptions.Packed) for a requantization
// by a shift alone: z = (acc + 2^(n−1)) >> n, Mult 1. n is the largest in 1..62 (for less,
// see below) at which the weights round(w·step·2^n/zscale) fit int16 (int8 in 21-bit lanes:
// a pair's lanes hold int16 weights at no cost, so the first layer, which reads the int32
// inputs, takes them even under WeightBits 8), the bias int32, and every partial sum and
// term, and the final sum plus 2^(n−1), is proven in the layer's lane (ql.LaneBits). The bias is corrected by the weights'
// rounding error at the calibration mean of the inputs (bias correction): the error a coarse
// weight makes on an input that is never near zero (a_prev ≈ 1) is mostly that constant.
func (b *mlpBuild) shiftChannel(ql *MLPLayer, k, j int, l *model.Layer, step []float64, rng []Interval) error {
	var last Interval
	wmax := b.wmax
	if ql.LaneBits == PairLaneBits {
		wmax = math.MaxInt16
	}
	// Below n = 1 the shift stays 1 and the channel's z grid coarsens instead, by 2^(1−n): a
	// relu or identity channel's scale is its own (the next layer's weights absorb it), and
	// one that calibration rarely turns on has a scale so fine that its weights overflow
	// the lane's width at every shift.
	minN := 1
	if l.Act != model.ActTanh && b.unitScale == 0 {
		minN = -30
	}
	for n := 62; n >= minN; n-- {
		u := math.Ldexp(ql.ZScale[j], -n)
		sh := max(n, 1)
		w := make([]int16, len(step))
		ok := true
		bias := 0.0
		if l.B != nil {
			bias = l.B[j] / u
		}
		for i, x := range l.W[j] {
			f := x * step[i] / u
			q := math.Round(f)
			if math.Abs(q) > wmax {
				ok = false
				break
			}
			w[i] = int16(q)
			bias += (f - q) * b.means[k][i] / step[i]
		}
		bias = math.Round(bias)
		if !ok || math.Abs(bias) > math.MaxInt32 {
			continue
		}
		acc := partialSums(w, int64(bias), rng)
		last = acc
		if top := int64(1) << (ql.LaneBits - 1); acc.Lo < -top || acc.Hi+half(sh) >= top {
			continue
		}
		ql.W[j], ql.B[j], ql.WScale[j], ql.Acc[j] = w, int32(bias), u, acc
		ql.Mult[j], ql.Shift[j], ql.ZScale[j] = 1, sh, math.Ldexp(u, sh)
		ql.Z[j] = Interval{Requant(acc.Lo, 1, sh), Requant(acc.Hi, 1, sh)}
		return nil
	}
	return fmt.Errorf("quantize: layer %d channel %d: no power-of-two weight scale proves its accumulator [%d, %d] in a %d-bit lane", k, j, last.Lo, last.Hi, ql.LaneBits)
}

// inputMeans is the mean of each layer's float inputs over the calibration rows as the NIC
// sees them.
func inputMeans(m *model.Model, inputs []Input, calib [][]float64) [][]float64 {
	means := make([][]float64, len(m.Layers))
	for k, l := range m.Layers {
		means[k] = make([]float64, l.In)
	}
	for _, row := range calib {
		x := representable(inputs, row)
		for k := range m.Layers {
			for i, v := range x {
				means[k][i] += v / float64(len(calib))
			}
			x = m.Layers[k].Dense(x)
		}
	}
	return means
}
