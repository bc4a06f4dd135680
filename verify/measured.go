package verify

import (
	"slices"

	"github.com/nicc-dev/nicc/budget"
)

// Measured is a verified call and its cycles in fwsim, a candidate for Budget to measure.
type Measured struct {
	Cycles uint64
	Vector budget.Vector
}

// Calls kept for Budget to measure: per batch, the longest and a sample; in all, measureMax.
// Between batches at most measureCap are kept, so memory does not grow with --vectors.
const (
	MeasureKeep = 512
	measureMax  = 2048
	measureCap  = 16 * measureMax
	longestN    = 64 // of measureMax, the longest calls; the rest an even sample by cycles
)

// byCycles orders calls longest first.
func byCycles(a, b Measured) int {
	switch {
	case a.Cycles > b.Cycles:
		return -1
	case a.Cycles < b.Cycles:
		return 1
	}
	return 0
}

// ThinMeasured halves calls kept beyond measureCap as pickMeasured chooses: the longest, and
// every other one of the rest by cycles.
func ThinMeasured(cand []Measured) []Measured {
	if len(cand) <= measureCap {
		return cand
	}
	slices.SortStableFunc(cand, byCycles)
	out := cand[:longestN]
	for i := longestN; i < len(cand); i += 2 {
		out = append(out, cand[i])
	}
	clear(cand[len(out):])
	return out
}

// PickMeasured keeps the longest calls and an even sample of the rest, measureMax in all.
func PickMeasured(cand []Measured) []budget.Vector {
	slices.SortStableFunc(cand, byCycles)
	var out []budget.Vector
	for i := 0; i < min(longestN, len(cand)); i++ {
		out = append(out, cand[i].Vector)
	}
	if rest := cand[min(longestN, len(cand)):]; len(rest) > 0 {
		stride := max(1, len(rest)/(measureMax-len(out)))
		for i := 0; i < len(rest) && len(out) < measureMax; i += stride {
			out = append(out, rest[i].Vector)
		}
	}
	return out
}
