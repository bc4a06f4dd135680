package distill

// nodeStat is a node's gradient sum and row count.
type nodeStat struct {
	g float64
	n int64
}

// histParts is the fixed number of row ranges (halves) histograms are summed over separately.
const histParts = 2

// histBins is the number of bins every histogram has room for (DefaultBins, the most).
const histBins = DefaultBins

// maxFeaturesFast is the most features whose histograms toLeaves addresses through a fixed
// array (no bounds checks in the innermost loop).
const maxFeaturesFast = 16

// half is one of the histParts fixed row ranges whose histograms are summed separately (in
// parallel, each in row order) and then added in order: fixed, so the sums do not depend on
// Threads. Rows are moved through a tree by their node (boostState.nid), a pass over the
// half in row order a level.
type half struct {
	lo, hi int
	// partition's scratch: a level's rows in summed children, in row order, and their slots
	summed, slots []int32
}

// histBuilder sums the gradient histograms of a tree's levels, per node (slot) and feature,
// over the halves, and moves the rows through the tree (boostState.nid). It reads the bins
// (binned) and the gradients it is given.
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

// newHistBuilder is the builder for n rows of nf features.
func newHistBuilder(n, nf int) *histBuilder {
	hb := &histBuilder{nf: nf}
	for p := range hb.halves {
		hf := &hb.halves[p]
		hf.lo, hf.hi = p*n/histParts, (p+1)*n/histParts
		hf.summed, hf.slots = make([]int32, hf.hi-hf.lo), make([]int32, hf.hi-hf.lo)
	}
	return hb
}

// startTree readies the root level of a new tree, every row at the root (nid 0): its
// histogram parts are summed from grad unless finish left them so (rootSummed).
func (hb *histBuilder) startTree(pl pool, d *binned, grad []float64, nid []uint16) {
	pl.forEach(histParts, func(p int) {
		clear(nid[hb.halves[p].lo:hb.halves[p].hi])
		if !hb.rootSummed {
			hb.sumRoot(p, d, grad)
		}
	})
	hb.rootSummed = false
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
	addRange(hb.parts[p], hf.lo, hf.hi, grad, d.rowBins, hb.nf)
	hb.rootCounts[p] = resize(hb.rootCounts[p], len(hb.parts[p]))
	for i, e := range hb.parts[p] {
		hb.rootCounts[p][i] = nodeStat{n: e.n}
	}
}

// nextRoot returns half p's root histogram for the next tree, holding the counts with
// gradient sums 0 (for finish to add the gradients into), and its rows lo..hi-1.
func (hb *histBuilder) nextRoot(p int) (h []nodeStat, lo, hi int) {
	hf := &hb.halves[p]
	hb.parts[p] = resize(hb.parts[p], hb.nf*histBins)
	copy(hb.parts[p], hb.rootCounts[p])
	return hb.parts[p], hf.lo, hf.hi
}

// levelSplits is one level of a growing tree as partition reads it: per node of the tree so
// far, where its rows go (step: a split node's to its children, any other's stay), and
// children, the next level's slots.
type levelSplits struct {
	step     []levelStep
	children int
}

// levelStep is lastStep with the next level's histogram slot of the node's summed child, and
// which side that child is: bit 0 of take for the rows that stay at left (bin ≤ bin), bit 1
// for those that go on (take 0: the node does not split).
type levelStep struct {
	lastStep
	slot int32
	take uint32
}

// partition moves the rows of half p on by one level (lv), in row order: nid gets each row's
// child. The rows of the summed children are listed with their slots, and then added into
// their histograms (parts[p]), in row order.
func (hb *histBuilder) partition(p int, d *binned, grad []float64, nid []uint16, lv levelSplits) {
	hf := &hb.halves[p]
	nf := hb.nf
	hb.parts[p] = resize(hb.parts[p], lv.children*nf*histBins)
	clear(hb.parts[p])
	k := moveRows(lv.step, nid[hf.lo:hf.hi], d.rowBins[hf.lo*nf:hf.hi*nf], nf, hf.lo, hf.summed, hf.slots)
	addRows(hb.parts[p], hf.summed[:k], hf.slots[:k], grad, d.rowBins, nf)
}

// moveRows moves the rows lo.. (their nodes nids, their bins, nf a row) on by step, and
// lists the rows of summed children (rows, with their slots); it returns how many. A
// function of its own: its loop keeps everything in registers.
func moveRows(step []levelStep, nids []uint16, bins []uint8, nf, lo int, rows, slots []int32) int {
	rows, slots = rows[:len(nids)], slots[:len(nids)]
	k := 0
	for i, n := range nids {
		sp := &step[n]
		// right when bin > sp.bin: branch-free, the two are equally likely
		right := int(uint(sp.bin-int(bins[i*nf+sp.feature])) >> 63)
		nids[i] = uint16(sp.left + right)
		rows[k], slots[k] = int32(lo+i), sp.slot
		k += int(sp.take>>right) & 1
	}
	return k
}

// addRange adds the gradient and count of rows lo..hi-1 to the histograms h (one slot:
// feature f's bins at f·histBins); rowBins holds nf bins per row.
func addRange(h []nodeStat, lo, hi int, grad []float64, rowBins []uint8, nf int) {
	for r := lo; r < hi; r++ {
		g := grad[r]
		for f, b := range rowBins[r*nf : r*nf+nf] {
			e := &h[f*histBins+int(b)]
			e.g += g
			e.n++
		}
	}
}

// addRows adds the gradient and count of every row rows[i] to its slot slots[i] of the
// histograms h (slot s, feature f's bins at (s·nf+f)·histBins); rowBins holds nf bins per row.
func addRows(h []nodeStat, rows, slots []int32, grad []float64, rowBins []uint8, nf int) {
	slots = slots[:len(rows)]
	for i, r := range rows {
		g := grad[r]
		hs := h[int(slots[i])*nf*histBins:]
		for f, b := range rowBins[int(r)*nf : int(r)*nf+nf] {
			e := &hs[f*histBins+int(b)]
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
