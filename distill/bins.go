package distill

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/nicc-dev/nicc/quantize"
)

// binned is the training set as histogram bins: per feature, candidate thresholds fixed once
// (see Options.Grid and Bins) and every row's bin. binData builds it; it is read-only after.
type binned struct {
	nf, n   int
	edges   [][]float64 // per feature: ascending thresholds; bin b holds (edges[b-1], edges[b]]
	nb      []int       // per feature: len(edges)+1
	rowBins []uint8     // row-major: rowBins[r*nf+f] is row r's bin of feature f
}

// binData bins the n rows of the column-major x into at most bins bins per feature (on the
// grid's midpoints when grid is set), and reports whether it met a NaN or infinity: the
// values are checked by this pass over them, not by one of their own.
func binData(x [][]float64, n int, grid []quantize.Input, bins int, pl pool) (*binned, bool) {
	nf := len(x)
	edges, nb := make([][]float64, nf), make([]int, nf)
	pl.forEach(nf, func(f int) {
		var g *quantize.Input
		if grid != nil {
			g = &grid[f]
		}
		edges[f] = featureEdges(x[f], g, bins)
		nb[f] = len(edges[f]) + 1
	})
	binners := make([]*binner, nf)
	for f, e := range edges {
		binners[f] = newBinner(e)
	}
	rowBins := make([]uint8, n*nf)
	var bad atomic.Bool
	pl.forRows(n, func(lo, hi int) {
		for f, bn := range binners {
			col := x[f]
			for r := lo; r < hi; r++ {
				k, ok := bn.quick(col[r]) // ok only for a finite value
				if !ok {
					if math.IsNaN(col[r]) || math.IsInf(col[r], 0) {
						bad.Store(true)
					}
					k = bn.search(col[r])
				}
				rowBins[r*nf+f] = uint8(k)
			}
		}
	})
	return &binned{nf: nf, n: n, edges: edges, nb: nb, rowBins: rowBins}, bad.Load()
}

// maxSample is the most rows per feature featureEdges sorts to place quantile edges.
var maxSample = 1 << 18

// featureEdges chooses the ascending thresholds of one feature (see Options.Grid and Bins).
func featureEdges(col []float64, g *quantize.Input, bins int) []float64 {
	// The sample sorts as integers (faster than floats): a grid feature's raw values, or an
	// order-preserving map of the float's bits.
	stride := max(1, len(col)/maxSample)
	s := make([]uint64, 0, len(col)/stride+1)
	for r := 0; r < len(col); r += stride {
		if g != nil {
			s = append(s, uint64(int64(g.Quantize(col[r]))-math.MinInt32))
		} else {
			s = append(s, floatKey(col[r]))
		}
	}
	radixSort(s)
	value := func(k uint64) float64 {
		if g != nil {
			return float64(int64(k) + math.MinInt32)
		}
		return keyFloat(k)
	}
	// A cut p (0 < p < len(s), s[p-1] < s[p]) separates the distinct values s[p-1] and s[p].
	distinct := 1
	for i := 1; i < len(s) && distinct <= bins; i++ {
		if s[i] != s[i-1] {
			distinct++
		}
	}
	var cuts []int
	if distinct <= bins {
		for i := 1; i < len(s); i++ {
			if s[i] != s[i-1] {
				cuts = append(cuts, i)
			}
		}
	} else {
		m := len(s)
		last := 0
		for j := 1; j < bins; j++ {
			// the first distinct value with at least rank samples below it, if not cut already
			rank := j * m / bins
			if rank <= last {
				continue
			}
			p := rank
			for p < m && s[p] == s[p-1] {
				p++
			}
			if p == m {
				continue
			}
			cuts = append(cuts, p)
			last = p
		}
	}
	edges := make([]float64, 0, len(cuts))
	for _, p := range cuts {
		a, b := value(s[p-1]), value(s[p])
		var t float64
		if g != nil {
			// raw values a < b: the grid midpoint in the middle of the gap
			k := int64(a) + (int64(b)-int64(a)-1)/2
			t = math.Ldexp(float64(2*k+1), -(g.Frac + 1))
		} else {
			t = a + (b-a)/2
			if !(t < b) {
				t = a
			}
		}
		if len(edges) == 0 || t > edges[len(edges)-1] {
			edges = append(edges, t)
		}
	}
	return edges
}

// floatKey maps finite floats to integers in the same order (−0 as +0).
func floatKey(v float64) uint64 {
	if v == 0 {
		v = 0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// keyFloat inverts floatKey.
func keyFloat(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// binOf is the number of edges below v: v's bin, the smallest b with v <= e[b] (len(e) if none).
func binOf(e []float64, v float64) int {
	// Branch-free lower bound: base ends at the last edge < v, if any.
	n := len(e)
	if n == 0 || v <= e[0] {
		return 0
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if e[base+half] < v {
			base += half
		}
		n -= half
	}
	return base + 1
}

// binBuckets is how many equal-width buckets a binner splits its edges' span into: many more
// than edges (DefaultBins), so that most buckets hold none and bin needs no search.
const binBuckets = 1 << 16

// binner is binOf in a few steps: the span of the edges is cut into equal-width buckets, and
// a value's bucket bounds its bin by the bins of the bucket's two ends, which a short search
// narrows (binOf's search over every edge costs a dependent load per halving).
type binner struct {
	e         []float64
	lo, scale float64  // bucket of v: (v − lo)·scale
	start     []uint16 // per bucket end (binBuckets+1 of them): binOf(e, the end)
}

func newBinner(e []float64) *binner {
	bn := &binner{e: e}
	if len(e) < 2 || len(e) > math.MaxUint16 {
		return bn
	}
	scale := binBuckets / (e[len(e)-1] - e[0])
	if !(scale > 0 && scale < math.MaxFloat64) { // a span too wide or too narrow to bucket
		return bn
	}
	bn.lo, bn.scale = e[0], scale
	bn.start = make([]uint16, binBuckets+1)
	k := 0 // edges below the bucket end: binOf(e, end), the ends ascending
	for b := range bn.start {
		end := bn.lo + float64(b)/bn.scale
		for k < len(e) && e[k] < end {
			k++
		}
		bn.start[b] = uint16(k)
	}
	return bn
}

// quick is binOf(bn.e, v) in the common case, a bucket with no edge inside (ok false
// otherwise); short enough to inline. The bucket's ends are a hint, checked before it is
// used: rounding may put v a bucket off, and then search answers.
func (bn *binner) quick(v float64) (int, bool) {
	// v > lo makes b ≥ 0, or (too large for an int) negative, and then uint(b)+1 is large.
	b := int((v - bn.lo) * bn.scale)
	if !(v > bn.lo) || uint(b)+1 >= uint(len(bn.start)) {
		return 0, false
	}
	k := int(bn.start[b])
	return k, k == int(bn.start[b+1]) && k > 0 && k < len(bn.e) && v <= bn.e[k] && bn.e[k-1] < v
}

// search is binOf(bn.e, v), for when quick has no answer.
func (bn *binner) search(v float64) int {
	e := bn.e
	if bn.start == nil || !(v > e[0]) || !(v <= e[len(e)-1]) {
		return binOf(e, v)
	}
	b := min(int((v-bn.lo)*bn.scale), binBuckets-1)
	lo, hi := int(bn.start[b]), int(bn.start[b+1])
	if lo > 0 && !(e[lo-1] < v) || hi < len(e) && !(v <= e[hi]) {
		return binOf(e, v)
	}
	return lo + binOf(e[lo:hi], v)
}

// radixSort sorts s ascending (LSD, 16-bit digits, skipping digits all keys share).
func radixSort(s []uint64) {
	if len(s) < 256 {
		slices.Sort(s)
		return
	}
	var or, and uint64 = 0, ^uint64(0)
	for _, k := range s {
		or |= k
		and &= k
	}
	buf := make([]uint64, len(s))
	src, dst := s, buf
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		if (or^and)>>shift&0xffff == 0 {
			continue
		}
		clear(count[:])
		for _, k := range src {
			count[k>>shift&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			d := k >> shift & 0xffff
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}
