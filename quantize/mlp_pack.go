package quantize

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/model"
)

// Packed lanes of a shift-requantized layer (MLPOptions.Packed).
//
// Two channels a and b of a hidden layer whose requantization is a shift (Mult 1) share one
// uint64: P = Ca + Σ_i v_i·Wi mod 2^64, with Ca = (B_a + 2^(n_a−1) + 2^31) + 2^32·(B_b +
// 2^(n_b−1)) and Wi = W_ai + 2^32·W_bi (two's complement, mod 2^64). When every sum
// A = B_a + Σ W_ai·v_i + 2^(n_a−1) is proven in [−2^31, 2^31), and likewise B's, P is exactly
// (A + 2^31) + 2^32·B as a signed 64-bit integer (the low lane in [0, 2^32), the high lane's
// 2^32·B in [−2^63, 2^63)), whatever the partial sums did on the way: arithmetic mod 2^64
// commutes with the sum. So z_b = P >> (32 + n_b) and z_a = int32(uint32(P) − 2^31) >> n_a,
// both arithmetic shifts, are the golden model's (acc + 2^(n−1)) >> n. Only the final sums
// are proven; the golden model computes each in int64.

// packedInWeightMax is the first layer's weight magnitude MLP shifts the inputs for under
// MLPOptions.Packed (as int8 weights do with 127): the inputs lose bits until weights of this
// size prove int32 accumulators. A lane holds the product of a weight and an input, so this
// splits its bits between them: on the shipped teacher, raw inputs leave 7-bit weights for the
// observation (max |Δy| 0.039), ±8191 measures 0.0042 and ±32767 (8-bit shifts) 0.0050.
const packedInWeightMax = 8191

// PairLaneBits is the width of one lane of a packed pair.
const PairLaneBits = 32

// Packable reports why channel j of l cannot take a packed lane (nil when it can): it must be
// a hidden channel requantized by a shift alone whose accumulator, rounding half included, is
// proven in [−2^31, 2^31).
func (l *MLPLayer) Packable(j int) error {
	if l.Final || l.Mult[j] != 1 {
		return fmt.Errorf("quantize: channel %d is requantized by a multiply, not a shift", j)
	}
	a := l.Acc[j]
	if h := half(l.Shift[j]); a.Lo+h < math.MinInt32 || a.Hi+h > math.MaxInt32 {
		return fmt.Errorf("quantize: channel %d accumulator [%d, %d] plus its rounding %d does not fit a %d-bit lane", j, a.Lo, a.Hi, h, PairLaneBits)
	}
	return nil
}

// PackPair is the packed bias word and one weight word per input of channels a (the low lane)
// and b (the high lane; b < 0 leaves it empty, zero).
func (l *MLPLayer) PackPair(a, b int) (bias uint64, w []uint64) {
	w = make([]uint64, l.In)
	bias = uint64(int64(l.B[a])+half(l.Shift[a])) + 1<<31
	for i := range l.In {
		w[i] = uint64(int64(l.W[a][i]))
	}
	if b >= 0 {
		bias += uint64(int64(l.B[b])+half(l.Shift[b])) << 32
		for i := range l.In {
			w[i] += uint64(int64(l.W[b][i])) << 32
		}
	}
	return bias, w
}

// PairZ is what the firmware computes from a packed pair over the inputs v: both channels'
// requantized z (before the activation's clamp), shifted by na and nb.
func PairZ(bias uint64, w []uint64, v []int64, na, nb int) (za, zb int64) {
	p := bias
	for i, x := range v {
		p += uint64(x) * w[i]
	}
	za = int64(int32(uint32(p)-1<<31) >> na)
	zb = int64(p) >> (32 + nb)
	return za, zb
}

// shiftChannel quantizes hidden channel j of layer k (MLPOptions.Packed) for a requantization
// by a shift alone: z = (acc + 2^(n−1)) >> n, Mult 1. n is the largest in 1..62 at which the
// weights round(w·step·2^n/zscale) fit int16, the bias int32, and every partial sum and term,
// and the final sum plus 2^(n−1), is proven in int32. The bias is corrected by the weights'
// rounding error at the calibration mean of the inputs (bias correction): the error a coarse
// weight makes on an input that is never near zero (a_prev ≈ 1) is mostly that constant.
func (b *mlpBuild) shiftChannel(ql *MLPLayer, k, j int, l *model.Layer, step []float64, rng []Interval) error {
	var last Interval
	for n := 62; n >= 1; n-- {
		u := math.Ldexp(ql.ZScale[j], -n)
		w := make([]int16, len(step))
		ok := true
		bias := 0.0
		if l.B != nil {
			bias = l.B[j] / u
		}
		for i, x := range l.W[j] {
			f := x * step[i] / u
			q := math.Round(f)
			if math.Abs(q) > math.MaxInt16 {
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
		if acc.Lo < math.MinInt32 || acc.Hi+half(n) > math.MaxInt32 {
			continue
		}
		ql.W[j], ql.B[j], ql.WScale[j], ql.Acc[j] = w, int32(bias), u, acc
		ql.Mult[j], ql.Shift[j] = 1, n
		ql.Z[j] = Interval{Requant(acc.Lo, 1, n), Requant(acc.Hi, 1, n)}
		return nil
	}
	return fmt.Errorf("quantize: layer %d channel %d: no power-of-two weight scale proves its accumulator [%d, %d] in int32", k, j, last.Lo, last.Hi)
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
