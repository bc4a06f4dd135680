package distill

import "github.com/nicc-dev/nicc/model"

// nodeStat is a node's gradient sum and row count.
type nodeStat struct {
	g float64
	n int64
}

// histParts is the fixed number of row ranges (halves) histograms are summed over separately.
const histParts = 2

// histBins is the number of bins every histogram has room for (DefaultBins, the most).
const histBins = DefaultBins

// maxFeaturesFast is the most features whose histograms are addressed through a fixed array
// (no bounds checks in the innermost loop).
const maxFeaturesFast = 16

// half is one of the histParts fixed row ranges whose histograms are summed separately (in
// parallel, each in row order) and then added in order: fixed, so the sums do not depend on
// Threads. Rows are moved through a tree by stable partitions of idx.
type half struct {
	lo, hi int
	rows   []int32  // lo..hi-1
	idx    []int32  // below the root: the rows, grouped by open node
	tmp    []int32  // partition scratch
	atRoot bool     // the rows are at the root: span indexes rows, not idx
	span   [][2]int // per open slot of the level: its rows, idx[span[0]:span[1]]
}

// histBuilder sums the gradient histograms of a tree's levels, per node (slot) and feature,
// over the halves, and keeps each half's rows partitioned among the open nodes. It reads the
// bins (binned) and the gradients it is given.
type histBuilder struct {
	nf     int
	halves [histParts]half
	// hist and prev are this level's and the previous level's histograms, parts the halves'
	// sums: slot s, feature f, bin b at (s·nf+f)·histBins+b.
	hist, prev []nodeStat
	parts      [histParts][]nodeStat
	// rootCounts are the halves' root histograms with gradient sums 0: no tree changes a count.
	rootCounts [histParts][]nodeStat
	rootSummed bool // parts hold the root's sums for the current gradients
}

// newHistBuilder is the builder for n rows of nf features, every row at the root.
func newHistBuilder(n, nf int, pl pool) *histBuilder {
	hb := &histBuilder{nf: nf}
	pl.forEach(histParts, func(p int) { // each thread clears and fills its own
		hf := &hb.halves[p]
		hf.lo, hf.hi = p*n/histParts, (p+1)*n/histParts
		hf.rows = make([]int32, hf.hi-hf.lo)
		for i := range hf.rows {
			hf.rows[i] = int32(hf.lo + i)
		}
		hf.idx = make([]int32, hf.hi-hf.lo)
		hf.tmp = make([]int32, hf.hi-hf.lo)
		hf.atRoot = true
	})
	return hb
}

// startTree readies the root level of a new tree, every row at the root: its histogram parts
// are summed from grad unless finish left them so (rootSummed).
func (hb *histBuilder) startTree(pl pool, d *binned, grad []float64) {
	if !hb.rootSummed {
		pl.forEach(histParts, func(p int) { hb.sumRoot(p, d, grad) })
	}
	hb.rootSummed = false
	for p := range hb.halves {
		hb.halves[p].span = append(hb.halves[p].span[:0], [2]int{0, len(hb.halves[p].idx)})
	}
}

// markRoot records whether parts hold the root's sums for the current gradients: finish's
// pass sums them (unless no tree follows); a refit changes the gradients, and then the next
// tree sums the root afresh.
func (hb *histBuilder) markRoot(summed bool) { hb.rootSummed = summed }

// sumRoot sums half p's rows into its root histogram (parts[p], slot 0), in row order, and
// keeps its counts (rootCounts[p]), which no tree changes.
func (hb *histBuilder) sumRoot(p int, d *binned, grad []float64) {
	hf := &hb.halves[p]
	hb.parts[p] = resize(hb.parts[p], hb.nf*histBins)
	clear(hb.parts[p])
	addRows(hb.parts[p], hf.rows, grad, d.rowBins, hb.nf)
	hb.rootCounts[p] = resize(hb.rootCounts[p], len(hb.parts[p]))
	for i, e := range hb.parts[p] {
		hb.rootCounts[p][i] = nodeStat{n: e.n}
	}
}

// nextRoot puts half p's rows back at the root for the next tree and returns its root
// histogram holding the counts with gradient sums 0 (for finish to add the gradients into),
// and its rows lo..hi-1.
func (hb *histBuilder) nextRoot(p int) (h []nodeStat, lo, hi int) {
	hf := &hb.halves[p]
	hb.parts[p] = resize(hb.parts[p], hb.nf*histBins)
	copy(hb.parts[p], hb.rootCounts[p])
	hf.atRoot = true
	return hb.parts[p], hf.lo, hf.hi
}

// levelSplits is one level of a growing tree as partition reads it: the open nodes (slots),
// each one's split (gain 0: none), the tree's nodes so far (a split node's children), per
// open slot its summed child's slot (or -1), and whether the next level is the tree's last.
type levelSplits struct {
	open     []int
	cands    []candidate
	nodes    []model.Node
	summed   []int32
	nextLast bool
}

// partition moves the rows of half p on from the open nodes of lv: a node that does not split
// is their leaf (nid); a split node's rows are partitioned, stably, into its two children's
// spans, and the summed child's histogram is added into parts[p] (slot summed[s]). When the
// next level is the last, nid gets each row's child too.
func (hb *histBuilder) partition(p int, d *binned, grad []float64, nid []uint16, lv levelSplits) {
	hf := &hb.halves[p]
	nf := hb.nf
	var span [][2]int
	children := 0
	for s := range lv.open {
		if lv.cands[s].gain > 0 {
			children += 2
		}
	}
	hb.parts[p] = resize(hb.parts[p], children*nf*histBins)
	clear(hb.parts[p])
	for s, nd := range lv.open {
		a, b := hf.span[s][0], hf.span[s][1]
		rows, src := hf.idx[a:b], hf.idx[a:b]
		if hf.atRoot {
			src = hf.rows[a:b]
		}
		c := lv.cands[s]
		if c.gain <= 0 {
			for _, r := range src {
				nid[r] = uint16(nd)
			}
			continue
		}
		col, sb := d.colBins[c.feature], c.bin
		nl, nr := 0, 0
		tmp := hf.tmp[:len(rows)]
		// right when bin > sb: branch-free, the two are equally likely. Two copies of the
		// loop, so that the common case does not test nextLast on every row.
		if lv.nextLast {
			left := lv.nodes[nd].Left
			for _, r := range src { // src is rows, or at the root hf.rows
				right := int(uint(sb-int(col[r])) >> 63)
				rows[nl] = r
				tmp[nr] = r
				nid[r] = uint16(left + right)
				nl += 1 - right
				nr += right
			}
		} else {
			for _, r := range src {
				right := int(uint(sb-int(col[r])) >> 63)
				rows[nl] = r
				tmp[nr] = r
				nl += 1 - right
				nr += right
			}
		}
		copy(rows[nl:], tmp[:nr])
		span = append(span, [2]int{a, a + nl}, [2]int{a + nl, b})
		cs := int(lv.summed[s])
		addRows(hb.parts[p][cs*nf*histBins:][:nf*histBins], hf.idx[span[cs][0]:span[cs][1]], grad, d.rowBins, nf)
	}
	hf.span = append(hf.span[:0], span...)
	hf.atRoot = false
}

// addRows adds the gradient and count of every row in rows to the histograms h (one slot:
// feature f's bins at f·histBins); rowBins holds nf bins per row.
func addRows(h []nodeStat, rows []int32, grad []float64, rowBins []uint8, nf int) {
	var hs [maxFeaturesFast]*[histBins]nodeStat
	if nf > maxFeaturesFast {
		for _, r := range rows {
			g := grad[r]
			for f, b := range rowBins[int(r)*nf : int(r)*nf+nf] {
				e := &h[f*histBins+int(b)]
				e.g += g
				e.n++
			}
		}
		return
	}
	for f := range nf {
		hs[f] = (*[histBins]nodeStat)(h[f*histBins:])
	}
	for _, r := range rows {
		g := grad[r]
		for f, b := range rowBins[int(r)*nf : int(r)*nf+nf] {
			e := &hs[f][b]
			e.g += g
			e.n++
		}
	}
}

// descend makes this level's histograms the previous level's, which the next level's merge
// derives from.
func (hb *histBuilder) descend() { hb.hist, hb.prev = hb.prev, hb.hist }

// merge fills hist (slot s, feature f at (s·nf+f)·histBins) for the level's slots: a slot s
// with sib[s] ≥ 0 is derived as its parent's histogram (prev, slot par[s]) minus its
// sibling's (the subtraction trick: only the smaller child of each split is summed); the
// others are the halves' sums (parts), added in order. nil sib: every slot is summed. It
// returns the level's histograms for the split search.
func (hb *histBuilder) merge(pl pool, d *binned, slots int, sib, par []int32) levelHist {
	nf := hb.nf
	size := slots * nf * histBins
	hb.hist = resize(hb.hist, size)
	pl.forEach(slots, func(s int) {
		if sib != nil && sib[s] >= 0 {
			return
		}
		dst := hb.hist[s*nf*histBins:][:nf*histBins]
		copy(dst, hb.parts[0][s*nf*histBins:])
		for p := 1; p < histParts; p++ {
			src := hb.parts[p][s*nf*histBins:][:len(dst)]
			for b := range dst {
				dst[b].g += src[b].g
				dst[b].n += src[b].n
			}
		}
	})
	if sib != nil {
		for s := range slots {
			if sib[s] < 0 {
				continue
			}
			dst := hb.hist[s*nf*histBins:][:nf*histBins]
			pa := hb.prev[int(par[s])*nf*histBins:][:len(dst)]
			o := hb.hist[int(sib[s])*nf*histBins:][:len(dst)]
			for b := range dst {
				dst[b] = nodeStat{pa[b].g - o[b].g, pa[b].n - o[b].n}
			}
		}
	}
	return levelHist{h: hb.hist, nf: nf, nb: d.nb}
}

// levelHist is one level's histograms as the split search reads them.
type levelHist struct {
	h  []nodeStat
	nf int
	nb []int // per feature: its bins
}

// of is slot s's histogram of feature f.
func (lh levelHist) of(s, f int) []nodeStat {
	return lh.h[(s*lh.nf+f)*histBins:][:lh.nb[f]]
}

// total is the sum of a slot's histogram (over feature 0's bins).
func (lh levelHist) total(s int) nodeStat {
	var st nodeStat
	for _, e := range lh.of(s, 0) {
		st.g += e.g
		st.n += e.n
	}
	return st
}

// resize is s with length n, reallocated only when its capacity is too small.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
