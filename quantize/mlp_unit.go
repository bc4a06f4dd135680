package quantize

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// Unit output weights (MLPOptions.UnitOutput).
//
// A final dense layer y = act(b + Σ_j w_j·h_j) over relu channels h_j = relu(s_j) computes
// the same function as y = act(b + Σ_j sign(w_j)·h'_j) with h'_j = relu(|w_j|·s_j): relu is
// positively homogeneous. unitOutput rewrites the float network so; the relu layer's
// channels then carry their final weight's magnitude, and since their values are all in the
// units of the final pre-activation they share one scale. unitLayer picks it as the final
// grid's step over 2^e, e as large as every channel's shift proof allows (finer scales keep
// more of each channel: a channel's value is its 32-bit lane shifted by at least 1, where the
// plain packed form rounds it to a 16-bit grid of its own), and unitChannel quantizes the
// final layer exactly: weights ±1, requantization by e bits. The final layer costs one add or
// subtract per channel instead of a multiply by a 16-bit constant.

// unitOutput is m with each final weight's magnitude moved into the relu channel it reads
// (weights and bias scaled by it) and the final weights replaced by their signs.
func unitOutput(m *model.Model, opt MLPOptions) (*model.Model, error) {
	n := len(m.Layers)
	if !opt.Packed {
		return nil, fmt.Errorf("quantize: unit output weights need packed lanes")
	}
	if n < 2 || m.Layers[n-2].Act != model.ActReLU {
		return nil, fmt.Errorf("quantize: unit output weights need a relu layer before the final one")
	}
	u := *m
	u.Layers = slices.Clone(m.Layers)
	h, o := &u.Layers[n-2], &u.Layers[n-1]
	w := make([][]float64, h.Out)
	var b []float64
	if h.B != nil {
		b = make([]float64, h.Out)
	}
	sign := make([]float64, h.Out)
	for j, x := range o.W[0] {
		c := math.Abs(x)
		w[j] = make([]float64, h.In)
		for i, v := range h.W[j] {
			w[j][i] = v * c
		}
		if b != nil {
			b[j] = h.B[j] * c
		}
		if slices.ContainsFunc(w[j], func(v float64) bool { return !finite(v) }) || (b != nil && !finite(b[j])) {
			return nil, fmt.Errorf("quantize: layer %d channel %d times its final weight %g overflows float64", n-2, j, x)
		}
		switch {
		case x > 0:
			sign[j] = 1
		case x < 0:
			sign[j] = -1
		}
	}
	h.W, h.B = w, b
	o.W = [][]float64{sign}
	return &u, nil
}

// unitLayer quantizes layer k, the relu layer before the final one, with every channel on
// the scale of the final grid's step over 2^e, e from 62 down to the first at which every
// channel's shift proof holds and the final bias fits int32 on that scale.
func (b *mlpBuild) unitLayer(k int, m *model.Model, rng []Interval, step []float64) (MLPLayer, []Interval, []float64, error) {
	fl := &m.Layers[k+1]
	_, _, fs := b.grid(k+1, fl, true)
	var err error
	for e := 62; e >= 1; e-- {
		b.unitScale, b.unitShift = math.Ldexp(fs, -e), e
		if fl.B != nil && math.Abs(math.Round(fl.B[0]/b.unitScale)) > math.MaxInt32 {
			continue
		}
		var ql MLPLayer
		var next []Interval
		var nstep []float64
		if ql, next, nstep, err = b.layer(k, &m.Layers[k], false, rng, step); err == nil {
			return ql, next, nstep, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("quantize: the final bias does not fit int32 on any scale")
	}
	return MLPLayer{}, nil, nil, err
}

// unitChannel quantizes final channel j under UnitOutput: weights ±1 and 0 (l's, after
// unitOutput), the bias on unitScale, requantized by unitShift bits.
func (b *mlpBuild) unitChannel(ql *MLPLayer, k, j int, l *model.Layer, rng []Interval) error {
	w := make([]int16, l.In)
	for i, x := range l.W[j] {
		w[i] = int16(x)
	}
	bias := 0.0
	if l.B != nil {
		bias = math.Round(l.B[j] / b.unitScale)
	}
	if math.Abs(bias) > math.MaxInt32 {
		return fmt.Errorf("quantize: layer %d bias %d = %g does not fit int32 at scale %g", k, j, l.B[j], b.unitScale)
	}
	acc := partialSums(w, int64(bias), rng)
	if acc.Lo < math.MinInt32 || acc.Hi > math.MaxInt32 {
		ql.AccBits = 64
	}
	if max(-acc.Lo, acc.Hi) > math.MaxInt64/2-half(b.unitShift) {
		return fmt.Errorf("quantize: layer %d channel %d accumulator [%d, %d] overflows int64", k, j, acc.Lo, acc.Hi)
	}
	ql.W[j], ql.B[j], ql.WScale[j], ql.Acc[j] = w, int32(bias), b.unitScale, acc
	ql.Mult[j], ql.Shift[j] = 1, b.unitShift
	ql.Z[j] = Interval{Requant(acc.Lo, 1, b.unitShift), Requant(acc.Hi, 1, b.unitShift)}
	return nil
}
