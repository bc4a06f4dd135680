package quantize

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

// Input formats from declared ranges: the padding that keeps every value that set a range
// strictly inside it, the ranges of a tree ensemble's features, the RL-CC grid, and the
// checks that a chosen format can represent every split.

// PadRange widens [lo, hi] by 1/64 of its span, at least 1/1024 of its magnitude (1 when
// both are 0), so that the values that set it lie strictly inside.
func PadRange(lo, hi float64) (float64, float64) {
	pad := max((hi-lo)/64, max(math.Abs(lo), math.Abs(hi))/1024)
	if pad == 0 {
		pad = 1
	}
	return lo - pad, hi + pad
}

// RowRanges is each of n inputs' hull over the rows of every set (NaN skipped), padded;
// [-1, 1] padded for an input that no row gives a value.
func RowRanges(n int, sets ...[][]float64) (lo, hi []float64) {
	lo, hi = make([]float64, n), make([]float64, n)
	for i := range n {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
		for _, rows := range sets {
			for _, row := range rows {
				if v := row[i]; !math.IsNaN(v) {
					lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
				}
			}
		}
		if lo[i] > hi[i] {
			lo[i], hi[i] = -1, 1
		}
		lo[i], hi[i] = PadRange(lo[i], hi[i])
	}
	return lo, hi
}

// GridInputs are the RL-CC handler's inputs as formats: the Q16 grid it computes them on.
func GridInputs(grid []rlcc.GridInput) []Input {
	ins := make([]Input, len(grid))
	for i, g := range grid {
		ins[i] = Input{Name: g.Name, Frac: g.Frac, Min: g.Min, Max: g.Max}
	}
	return ins
}

// BeyondFixedPoint reports whether threshold t lies beyond every value any input format can
// represent (|raw / 2^Frac| <= 2^31 · 2^-MinFrac = 2^63), so that its split is constant for
// every input and folds exactly: CatBoost's -FLT_MAX border, which sets NaN apart under
// nan_mode Min, is one. TreeRanges leaves such thresholds out of a range, and CheckResolution
// and CheckClampedSplits accept their fold (no finite value is above +FLT_MAX either).
func BeyondFixedPoint(t float64) bool { return math.Abs(t) > math.Ldexp(1, 31-MinFrac) }

// TreeRanges is each feature's declared range for a tree ensemble without a handler's
// ranges: the hull of its thresholds and of its column of rows, padded (PadRange), so that
// every threshold lies strictly inside; src says where each came from. A caller clamps
// inputs to these ranges, which changes no branch.
func TreeRanges(m *model.Model, rows [][]float64) (lo, hi []float64, src []string) {
	n := m.NumInputs()
	lo, hi = make([]float64, n), make([]float64, n)
	have := make([]bool, n)
	hasT := make([]bool, n)
	widen := func(i int, v float64) {
		if math.IsNaN(v) {
			return
		}
		if !have[i] {
			lo[i], hi[i], have[i] = v, v, true
			return
		}
		lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
	}
	_ = forEachSplit(m, func(_, _ int, nd *model.Node) error {
		if BeyondFixedPoint(nd.Threshold) {
			return nil
		}
		widen(nd.Feature, nd.Threshold)
		hasT[nd.Feature] = true
		return nil
	})
	for _, row := range rows {
		for i, v := range row {
			widen(i, v)
		}
	}
	src = make([]string, n)
	for i := range n {
		switch {
		case hasT[i] && rows != nil:
			src[i] = "thresholds and rows, padded"
		case hasT[i]:
			src[i] = "thresholds, padded"
		case rows != nil:
			src[i] = "rows, padded (no splits)"
		default:
			lo[i], hi[i] = -1, 1
			src[i] = "no splits: [-1, 1]"
			continue
		}
		lo[i], hi[i] = PadRange(lo[i], hi[i])
	}
	return lo, hi, src
}

// CheckResolution refuses formats that cannot tell two thresholds of a feature apart, or
// fold a split inside the declared range. Errors name the tree and node.
func CheckResolution(m *model.Model, inputs []Input) error {
	type key struct {
		f int
		t int32
	}
	seen := map[key]float64{}
	f32 := m.Ensemble.SplitsFloat32()
	return forEachSplit(m, func(t, i int, n *model.Node) error {
		in := inputs[n.Feature]
		s, err := Split(n, in, f32)
		if err != nil {
			return fmt.Errorf("tree %d node %d: %w", t, i, err)
		}
		if s.Const && !BeyondFixedPoint(n.Threshold) {
			return fmt.Errorf("tree %d node %d splits %s at %v, which its range [%v, %v] in Q%d cannot represent",
				t, i, in.Name, n.Threshold, in.Value(in.Min), in.Value(in.Max), in.Frac)
		}
		k := key{n.Feature, s.T}
		if prev, ok := seen[k]; ok && prev != n.Threshold {
			return fmt.Errorf("feature %s: thresholds %v and %v both become raw <= %d: its range [%v, %v] in Q%d (one step is %g) cannot represent the difference",
				in.Name, prev, n.Threshold, s.T, in.Value(in.Min), in.Value(in.Max), in.Frac, in.Resolution())
		}
		seen[k] = n.Threshold
		return nil
	})
}

// CheckClampedSplits refuses a split above the top of an input the handler clamps (clamped
// marks them: the RL-CC observation), whose branch the firmware would never take and whose
// threshold the range cannot represent. Errors name the tree and node.
func CheckClampedSplits(m *model.Model, inputs []Input, clamped []bool) error {
	e := m.Ensemble
	return forEachSplit(m, func(t, i int, n *model.Node) error {
		in := inputs[n.Feature]
		if !clamped[n.Feature] {
			return nil
		}
		s, err := Split(n, in, e.SplitsFloat32())
		if err != nil {
			return fmt.Errorf("tree %d node %d: %w", t, i, err)
		}
		if s.Const && s.AllLow && n.Threshold > in.Value(in.Max) && !BeyondFixedPoint(n.Threshold) {
			return fmt.Errorf("tree %d node %d splits %s at %v, above %v where the RL-CC handler clamps it: the feature range cannot represent this threshold",
				t, i, in.Name, n.Threshold, in.Value(in.Max))
		}
		return nil
	})
}

// forEachSplit calls f on every split of the ensemble.
func forEachSplit(m *model.Model, f func(tree, node int, n *model.Node) error) error {
	for t := range m.Ensemble.Trees {
		for i := range m.Ensemble.Trees[t].Nodes {
			if n := &m.Ensemble.Trees[t].Nodes[i]; !n.Leaf {
				if err := f(t, i, n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
