package compiler

import (
	"slices"

	"github.com/nicc-dev/nicc/budget"
)

// measured is a verified call and its cycles in fwsim, a candidate for Budget to measure.
type measured struct {
	cycles uint64
	v      budget.Vector
}

// Calls kept for Budget to measure: per batch, the longest and a sample; in all, measureMax.
// Between batches at most measureCap are kept, so memory does not grow with --vectors.
const (
	measureKeep = 512
	measureMax  = 2048
	measureCap  = 16 * measureMax
	longestN    = 64 // of measureMax, the longest calls; the rest an even sample by cycles
)

// byCycles orders calls longest first.
func byCycles(a, b measured) int {
	switch {
	case a.cycles > b.cycles:
		return -1
	case a.cycles < b.cycles:
		return 1
	}
	return 0
}

// thinMeasured halves calls kept beyond measureCap as pickMeasured chooses: the longest, and
// every other one of the rest by cycles.
func thinMeasured(cand []measured) []measured {
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

// pickMeasured keeps the longest calls and an even sample of the rest, measureMax in all.
func pickMeasured(cand []measured) []budget.Vector {
	slices.SortStableFunc(cand, byCycles)
	var out []budget.Vector
	for i := 0; i < min(longestN, len(cand)); i++ {
		out = append(out, cand[i].v)
	}
	if rest := cand[min(longestN, len(cand)):]; len(rest) > 0 {
		stride := max(1, len(rest)/(measureMax-len(out)))
		for i := 0; i < len(rest) && len(out) < measureMax; i += stride {
			out = append(out, rest[i].v)
		}
	}
	return out
}
