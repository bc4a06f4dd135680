package distill

import (
	"github.com/nicc-dev/nicc/model"
)

// nodeStat is a node's gradient sum and row count.
type nodeStat struct {
	g float64
	n int64
}

// score is G²/(H+λ), the loss reduction of a leaf with optimal value (0 when H+λ = 0).
func (t *trainer) score(g float64, n int64) float64 {
	d := float64(n) + t.lambda
	if d <= 0 {
		return 0
	}
	return g * g / d
}

// leafValue is −G/(H+λ)·η (0 when H+λ = 0).
func (t *trainer) leafValue(s nodeStat) float64 {
	d := float64(s.n) + t.lambda
	if d <= 0 {
		return 0
	}
	return -t.lr*s.g/d + 0 // + 0: no −0 leaves
}

// candidate is a split of one node: rows with bin ≤ bin go left.
type candidate struct {
	gain    float64
	feature int
	bin     int
	left    nodeStat
}

// grow builds one tree on the current residuals, adds it to the gradients, and reports whether it
// has any split.
func (t *trainer) grow() (model.Tree, bool) {
	// Rows start at the root with gradients pred − y: newTrainer, apply and the end of the
	// previous grow leave them so (and the latter two the root's histogram parts too).
	if !t.rootSummed {
		t.forEach(histParts, func(p int) { t.sumRoot(p) })
	}
	t.rootSummed = false
	nodes := []model.Node{{}}
	stats := []nodeStat{{}}
	open := []int{0}
	for p := range t.halves {
		t.halves[p].span = append(t.halves[p].span[:0], [2]int{0, len(t.halves[p].idx)})
	}
	split := false
	var sib, par []int32 // per slot of the level: see mergeHist
	var lastOpen []int
	var lastCands []candidate
	if t.opt.Depth == 1 {
		clear(t.nid) // the root is the last level: every row is at node 0
	}
	for depth := 0; len(open) > 0; depth++ {
		t.mergeHist(len(open), sib, par)
		if depth == 0 {
			stats[0] = t.histTotal(0)
		}
		var cands []candidate // per open slot; gain 0 = no split
		if t.opt.Oblivious {
			cands = t.bestOblivious(open, stats)
		} else {
			cands = make([]candidate, len(open))
			t.forEach(len(open), func(s int) { cands[s] = t.bestSplit(s, stats[open[s]]) })
		}
		var next []int
		sib, par = sib[:0], par[:0]
		summed := make([]int32, len(open)) // per open slot: its summed child's slot, or -1
		for s, nd := range open {
			c := cands[s]
			summed[s] = -1
			if c.gain <= 0 {
				continue
			}
			// Sum the smaller child; derive the larger.
			cs := int32(len(next))
			if 2*c.left.n <= stats[nd].n {
				sib, par = append(sib, -1, cs), append(par, -1, int32(s))
				summed[s] = cs
			} else {
				sib, par = append(sib, cs+1, -1), append(par, int32(s), -1)
				summed[s] = cs + 1
			}
			split = true
			l, r := len(nodes), len(nodes)+1
			nodes[nd] = model.Node{Feature: c.feature, Threshold: t.edges[c.feature][c.bin], Cmp: model.CmpLE, Left: l, Right: r}
			ps := stats[nd]
			nodes = append(nodes, model.Node{}, model.Node{})
			stats = append(stats, c.left, nodeStat{ps.g - c.left.g, ps.n - c.left.n})
			next = append(next, l, r)
		}
		if depth == t.opt.Depth-1 {
			lastOpen, lastCands = open, cands // finish moves their rows to the leaves
			break
		}
		t.hist, t.prev = t.prev, t.hist
		nextLast := depth+1 == t.opt.Depth-1
		t.forEach(histParts, func(p int) { t.partition(p, open, cands, nodes, summed, nextLast) })
		open = next
	}
	// The last step: a row at node i goes on to step[i].left, or the node after it when its
	// bin of step[i].feature is above step[i].bin (never, for a leaf: it stays).
	step := make([]lastStep, len(nodes))
	for i := range step {
		step[i] = lastStep{bin: histBins - 1, left: i}
	}
	for s, nd := range lastOpen {
		if c := lastCands[s]; c.gain > 0 {
			step[nd] = lastStep{c.feature, c.bin, nodes[nd].Left}
		}
	}
	val := make([]float64, len(nodes))
	for i := range nodes {
		if nodes[i].Left == 0 {
			v := t.leafValue(stats[i])
			nodes[i] = model.Node{Leaf: true, Value: v}
			val[i] = v
		}
	}
	keep := split || len(t.trees) == 0 // Train drops a tree without splits unless it is the first
	if !keep {
		clear(val)
	}
	// The leaves, numbered: the refit's group keys take a leaf's number, not its node's.
	leafNum := make([]int32, len(nodes))
	var leaves []uint16
	for i := range nodes {
		if nodes[i].Leaf {
			leafNum[i] = int32(len(leaves))
			leaves = append(leaves, uint16(i))
		}
	}
	t.finish(step, val, leafNum, leaves, keep)
	return model.Tree{Nodes: nodes}, split
}

// lastStep is a node's split on the last level (see grow).
type lastStep struct{ feature, bin, left int }

// partition moves the rows of half p on from the open nodes (slots) of a level: a node that
// does not split (gain 0) is their leaf (t.nid); a split node's rows are partitioned, stably,
// into its two children's spans, and the summed child's histogram is added into t.parts[p]
// (slot summed[s]). When the next level is the last, t.nid gets each row's child too.
func (t *trainer) partition(p int, open []int, cands []candidate, nodes []model.Node, summed []int32, nextLast bool) {
	hf := &t.halves[p]
	nf := t.nf
	var span [][2]int
	children := 0
	for s := range open {
		if cands[s].gain > 0 {
			children += 2
		}
	}
	t.parts[p] = resize(t.parts[p], children*nf*histBins)
	clear(t.parts[p])
	for s, nd := range open {
		a, b := hf.span[s][0], hf.span[s][1]
		rows, src := hf.idx[a:b], hf.idx[a:b]
		if hf.atRoot {
			src = hf.rows[a:b]
		}
		c := cands[s]
		if c.gain <= 0 {
			for _, r := range src {
				t.nid[r] = uint16(nd)
			}
			continue
		}
		col, sb := t.colBins[c.feature], c.bin
		nl, nr := 0, 0
		tmp := hf.tmp[:len(rows)]
		// right when bin > sb: branch-free, the two are equally likely. Two copies of the
		// loop, so that the common case does not test nextLast on every row.
		if nextLast {
			left := nodes[nd].Left
			for _, r := range src { // src is rows, or at the root hf.rows
				right := int(uint(sb-int(col[r])) >> 63)
				rows[nl] = r
				tmp[nr] = r
				t.nid[r] = uint16(left + right)
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
		cs := int(summed[s])
		t.addRows(t.parts[p][cs*nf*histBins:][:nf*histBins], hf.idx[span[cs][0]:span[cs][1]])
	}
	hf.span = append(hf.span[:0], span...)
	hf.atRoot = false
}

// addRows adds the gradient and count of every row in rows to the histograms h (one slot:
// feature f's bins at f·histBins).
func (t *trainer) addRows(h []nodeStat, rows []int32) {
	nf := t.nf
	var hs [maxFeaturesFast]*[histBins]nodeStat
	if nf > maxFeaturesFast {
		for _, r := range rows {
			g := t.grad[r]
			for f, b := range t.rowBins[int(r)*nf : int(r)*nf+nf] {
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
		g := t.grad[r]
		for f, b := range t.rowBins[int(r)*nf : int(r)*nf+nf] {
			e := &hs[f][b]
			e.g += g
			e.n++
		}
	}
}

// sumRoot sums half p's rows into its root histogram (t.parts[p], slot 0), in row order,
// and keeps its counts (t.rootCounts[p]), which no tree changes.
func (t *trainer) sumRoot(p int) {
	hf := &t.halves[p]
	t.parts[p] = resize(t.parts[p], t.nf*histBins)
	clear(t.parts[p])
	t.addRows(t.parts[p], hf.rows)
	t.rootCounts[p] = resize(t.rootCounts[p], len(t.parts[p]))
	for i, e := range t.parts[p] {
		t.rootCounts[p][i] = nodeStat{n: e.n}
	}
}

// finish moves every row to its leaf (t.nid holds its node on the last level, or its leaf if
// that is above; step is the last level's splits) and adds the tree with leaf values val (per
// node) to the gradients (prediction − y, updated in place: no prediction array to read and write),
// summing the next root's histograms (unless t.lastRound), one pass per half in row order;
// when kept and the refit needs them, it splits the row groups.
func (t *trainer) finish(step []lastStep, val []float64, leafNum []int32, leaves []uint16, keep bool) {
	refine := (t.opt.Refit || t.opt.Corrective) && keep
	if refine && t.gid == nil {
		t.gid = make([]int32, t.n)
		t.ngroups = 1
	}
	keys := t.ngroups * len(leaves)
	fused := refine && keys <= maxGroupKeys
	keyed := t.gidKeyed // t.gid still holds the last renumber's keys
	sum := !t.lastRound // no tree follows the last round's
	if refine && !fused {
		t.settleGroups()
	}
	t.forEach(histParts, func(p int) {
		hf := &t.halves[p]
		if fused {
			hf.seen = resize(hf.seen, (keys+63)/64)
			clear(hf.seen)
		}
		// The next root's counts are the last root's: only the gradients are summed.
		t.parts[p] = resize(t.parts[p], t.nf*histBins)
		copy(t.parts[p], t.rootCounts[p])
		h := t.parts[p]
		nf := t.nf
		var hs [maxFeaturesFast]*[histBins]nodeStat
		if nf <= maxFeaturesFast {
			for f := range nf {
				hs[f] = (*[histBins]nodeStat)(h[f*histBins:])
			}
		}
		nl := int32(len(leaves))
		hf.atRoot = true
		for r := hf.lo; r < hf.hi; r++ {
			rb := t.rowBins[int(r)*nf : int(r)*nf+nf]
			st := &step[t.nid[r]]
			l := st.left + int(uint(st.bin-int(rb[st.feature]))>>63)
			if refine && !fused {
				t.nid[r] = uint16(l) // for refine
			}
			g := t.grad[r] + val[l]
			t.grad[r] = g
			switch {
			case !sum:
			case nf <= maxFeaturesFast:
				for f, b := range rb {
					hs[f][b].g += g
				}
			default:
				for f, b := range rb {
					h[f*histBins+int(b)].g += g
				}
			}
			if fused {
				g := t.gid[r]
				if keyed {
					g = t.rankOf(g)
				}
				k := g*nl + leafNum[l]
				t.gid[r] = k
				hf.seen[k>>6] |= 1 << (k & 63)
			}
		}
	})
	t.rootSummed = sum
	switch {
	case fused:
		t.renumber(leaves)
	case refine:
		t.refine(len(val))
	}
}

// resize is s with length n, reallocated only when its capacity is too small.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// mergeHist fills t.hist (slot s, feature f at (s·nf+f)·histBins) for the level's slots:
// a slot s with sib[s] ≥ 0 is derived as its parent's histogram (t.prev, slot par[s]) minus
// its sibling's (the subtraction trick: only the smaller child of each split is summed);
// the others are the halves' sums (t.parts), added in order. nil sib: every slot is summed.
func (t *trainer) mergeHist(slots int, sib, par []int32) {
	nf := t.nf
	size := slots * nf * histBins
	t.hist = resize(t.hist, size)
	t.forEach(slots, func(s int) {
		if sib != nil && sib[s] >= 0 {
			return
		}
		dst := t.hist[s*nf*histBins:][:nf*histBins]
		copy(dst, t.parts[0][s*nf*histBins:])
		for p := 1; p < histParts; p++ {
			src := t.parts[p][s*nf*histBins:][:len(dst)]
			for b := range dst {
				dst[b].g += src[b].g
				dst[b].n += src[b].n
			}
		}
	})
	if sib == nil {
		return
	}
	for s := range slots {
		if sib[s] < 0 {
			continue
		}
		dst := t.hist[s*nf*histBins:][:nf*histBins]
		pa := t.prev[int(par[s])*nf*histBins:][:len(dst)]
		o := t.hist[int(sib[s])*nf*histBins:][:len(dst)]
		for b := range dst {
			dst[b] = nodeStat{pa[b].g - o[b].g, pa[b].n - o[b].n}
		}
	}
}

// histOf is slot s's histogram of feature f in h (t.hist's layout).
func (t *trainer) histOf(h []nodeStat, s, f int) []nodeStat {
	return h[(s*t.nf+f)*histBins:][:t.nb[f]]
}

// histTotal is the sum of a slot's histogram (over feature 0's bins).
func (t *trainer) histTotal(s int) nodeStat {
	var st nodeStat
	for _, e := range t.histOf(t.hist, s, 0) {
		st.g += e.g
		st.n += e.n
	}
	return st
}

// bestSplit is the best weighted-gain split of slot s with totals ps (gain 0: none).
func (t *trainer) bestSplit(s int, ps nodeStat) candidate {
	best := candidate{}
	if ps.n < int64(2*t.minLeaf) {
		return best
	}
	parent := t.score(ps.g, ps.n)
	ml := int64(t.minLeaf)
	for f := range t.nf {
		w := t.weights[f]
		if w == 0 {
			continue
		}
		nb := t.nb[f]
		h := t.histOf(t.hist, s, f)
		var gl float64
		var nl int64
		for b := 0; b < nb-1; b++ {
			gl += h[b].g
			nl += h[b].n
			if nl < ml {
				continue
			}
			nr := ps.n - nl
			if nr < ml {
				break
			}
			gain := w * (t.score(gl, nl) + t.score(ps.g-gl, nr) - parent)
			if gain > best.gain && gain > t.minGain {
				best = candidate{gain: gain, feature: f, bin: b, left: nodeStat{gl, nl}}
			}
		}
	}
	return best
}

// bestOblivious picks one (feature, bin) for every open node, maximising the level's total
// weighted gain; every node gets that split (or none, if no split gains).
func (t *trainer) bestOblivious(open []int, stats []nodeStat) []candidate {
	type fbest struct {
		gain float64
		bin  int
	}
	per := make([]fbest, t.nf)
	ml := int64(t.minLeaf)
	t.forEach(t.nf, func(f int) {
		w := t.weights[f]
		per[f] = fbest{bin: -1}
		if w == 0 {
			return
		}
		nb := t.nb[f]
		total := make([]float64, nb-1)
		ok := make([]bool, nb-1)
		for b := range ok {
			ok[b] = true
		}
		for s, nd := range open {
			ps := stats[nd]
			parent := t.score(ps.g, ps.n)
			enforce := ps.n >= 2*ml
			h := t.histOf(t.hist, s, f)
			var gl float64
			var nl int64
			for b := 0; b < nb-1; b++ {
				gl += h[b].g
				nl += h[b].n
				if enforce && (nl < ml || ps.n-nl < ml) {
					ok[b] = false
				}
				total[b] += t.score(gl, nl) + t.score(ps.g-gl, ps.n-nl) - parent
			}
		}
		for b := range total {
			g := w * total[b]
			if ok[b] && g > per[f].gain && g > t.minGain {
				per[f] = fbest{g, b}
			}
		}
	})
	bf, bb, bg := -1, -1, 0.0
	for f, p := range per {
		if p.bin >= 0 && p.gain > bg {
			bf, bb, bg = f, p.bin, p.gain
		}
	}
	cands := make([]candidate, len(open))
	if bf < 0 {
		return cands
	}
	for s := range open {
		var gl float64
		var nl int64
		for _, e := range t.histOf(t.hist, s, bf)[:bb+1] {
			gl += e.g
			nl += e.n
		}
		cands[s] = candidate{gain: bg, feature: bf, bin: bb, left: nodeStat{gl, nl}}
	}
	return cands
}
