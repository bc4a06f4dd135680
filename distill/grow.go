package distill

import (
	"slices"

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

// grow builds one tree on the current residuals, adds it to t.pred, and reports whether it
// has any split.
func (t *trainer) grow() (model.Tree, bool) {
	// Rows start at the root with gradients pred − y: newTrainer, apply and the end of the
	// previous grow leave them so.
	nodes := []model.Node{{}}
	stats := []nodeStat{{}}
	open := []int{0}
	split := false
	var sib, par []int32 // per slot of the level: see buildHist
	var last *router     // the last level's splits, if it has any
	for depth := 0; depth < t.opt.Depth && len(open) > 0; depth++ {
		t.buildHist(len(open), sib, par, depth > 0)
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
		// Per node of this level: its split (bin, feature) or -1, and its children.
		route := make([]int32, len(nodes))
		feat := make([]int32, len(nodes))
		for i := range route {
			route[i] = -1
		}
		var next []int
		sib, par = sib[:0], par[:0]
		for s, nd := range open {
			c := cands[s]
			if c.gain <= 0 {
				continue
			}
			// Sum the smaller child; derive the larger.
			cs := int32(len(next))
			if 2*c.left.n <= stats[nd].n {
				sib, par = append(sib, -1, cs), append(par, -1, int32(s))
			} else {
				sib, par = append(sib, cs+1, -1), append(par, int32(s), -1)
			}
			split = true
			l, r := len(nodes), len(nodes)+1
			nodes[nd] = model.Node{Feature: c.feature, Threshold: t.edges[c.feature][c.bin], Cmp: model.CmpLE, Left: l, Right: r}
			ps := stats[nd]
			nodes = append(nodes, model.Node{}, model.Node{})
			stats = append(stats, c.left, nodeStat{ps.g - c.left.g, ps.n - c.left.n})
			route[nd], feat[nd] = int32(c.bin), int32(c.feature)
			next = append(next, l, r)
		}
		if len(next) == 0 {
			break
		}
		t.hist, t.prev = t.prev, t.hist
		// Route rows to the children. A row whose node did not split keeps it (a leaf) and
		// gets slot -1. Children's slots are 0, 1, ... in creation order, so the row's next
		// slot is its child's index minus the first child's, stored as −slot−2 when that
		// child's histogram is derived rather than summed (buildHist skips it).
		first := int32(next[0])
		left := make([]int32, len(route))
		for _, nd := range open {
			left[nd] = int32(nodes[nd].Left)
		}
		open = next
		if depth == t.opt.Depth-1 {
			// The last level: the final pass below routes rows to their leaves.
			last = &router{route: route, feat: feat, left: left, fromRoot: depth == 0}
			break
		}
		fromRoot := depth == 0
		// The slot each child's rows get: a lookup, not a branch (half the rows go to a
		// derived child, in no predictable order).
		code := make([]int16, len(sib))
		for cs, sb := range sib {
			code[cs] = int16(cs)
			if sb >= 0 {
				code[cs] = int16(-cs - 2)
			}
		}
		t.forRows(t.n, func(lo, hi int) {
			nid, slot := t.nid[lo:hi], t.slot[lo:hi]
			k := lo // the chunk's list of rows to sum (see buildHist) fills t.summed[lo:]
			for i, s := range slot {
				if s == -1 {
					continue
				}
				nd := nid[i]
				if fromRoot { // nid still holds the previous tree's leaves
					nd = 0
				}
				b := route[nd]
				if b < 0 {
					slot[i] = -1
					continue
				}
				// c = left, or right (left+1) when bin > b: branch-free, the two are
				// equally likely.
				c := left[nd] + int32(uint32(b-int32(t.rowBins[(lo+i)*t.nf+int(feat[nd])]))>>31)
				nid[i] = uint16(c)
				cs := code[c-first]
				slot[i] = cs
				t.summed[k] = int32(lo + i)
				k += int(^uint16(cs) >> 15) // listed when cs ≥ 0
			}
			t.summedN[lo/chunkRows] = k - lo
		})
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
	// Route rows by the last level's splits (if any) to their leaves (nid), add the tree to
	// pred, and set up the next round: gradients, rows at the root (slot 0; the first
	// routing ignores nid).
	atRoot := len(nodes) == 1
	nf := t.nf
	t.forRows(t.n, func(lo, hi int) {
		pred, y, grad, nid, slot := t.pred[lo:hi], t.y[lo:hi], t.grad[lo:hi], t.nid[lo:hi], t.slot[lo:hi]
		bins := t.rowBins[lo*nf : hi*nf]
		for i := range pred {
			l := int32(nid[i])
			switch {
			case atRoot:
				l = 0
			case last != nil && slot[i] != -1:
				if c := last.child(l, bins[i*nf:i*nf+nf]); c >= 0 {
					l = c
				}
			}
			nid[i] = uint16(l)
			p := pred[i] + val[l]
			pred[i] = p
			grad[i] = p - y[i]
			slot[i] = 0
		}
	})
	if (t.opt.Refit || t.opt.Corrective) && keep {
		t.refine(len(nodes))
	}
	return model.Tree{Nodes: nodes}, split
}

// router holds one level's splits, for routing rows to the next level.
type router struct {
	route, feat, left []int32 // per node: split bin (-1: no split), feature, left child
	fromRoot          bool    // the level is the root's: nid is not read
}

// child is the child of node nd (taken as the root when fromRoot) that a row with bins rb
// goes to, or -1 if nd did not split: left when bin ≤ split bin, else right (left+1).
func (rt *router) child(nd int32, rb []uint8) int32 {
	if rt.fromRoot {
		nd = 0
	}
	b := rt.route[nd]
	if b < 0 {
		return -1
	}
	return rt.left[nd] + int32(uint32(b-int32(rb[rt.feat[nd]]))>>31)
}

// histParts is the fixed number of row ranges histograms are summed over separately (in
// parallel) and then added in order: fixed, so the sums do not depend on Threads.
const histParts = 2

// buildHist fills t.hist[f][slot*nb+bin] for every feature. Each of histParts row ranges is
// summed in row order into its own histograms, for all features in one pass (rows with
// t.slot < 0 are skipped: settled, or in a slot that is derived); the parts are then added.
// A slot s with sib[s] ≥ 0 is not summed but derived, afterwards, as its parent's histogram
// (t.prev, slot par[s]) minus its sibling's (the subtraction trick: only the smaller child
// of each split is summed). With listed, the rows to sum are those grow's routing listed
// per chunk in t.summed, in row order, so the rows skipped cost no mispredicted branch.
func (t *trainer) buildHist(slots int, sib, par []int32, listed bool) {
	nf := t.nf
	off := make([]int, nf+1) // feature f's histogram is [off[f]*slots, off[f+1]*slots) of a part
	for f := range nf {
		off[f+1] = off[f] + t.nb[f]
	}
	size := off[nf] * slots
	for p := range t.parts {
		if cap(t.parts[p]) < size {
			t.parts[p] = make([]nodeStat, size)
		}
		t.parts[p] = t.parts[p][:size]
	}
	t.forEach(histParts, func(p int) {
		h := t.parts[p]
		clear(h)
		lo, hi := p*t.n/histParts, (p+1)*t.n/histParts
		base := make([]int, nf) // per feature: its offset in h
		for f := range nf {
			base[f] = off[f] * slots
		}
		if listed {
			for c := lo / chunkRows; c*chunkRows < hi; c++ {
				l := t.summed[c*chunkRows : c*chunkRows+t.summedN[c]]
				from, _ := slices.BinarySearch(l, int32(lo))
				to, _ := slices.BinarySearch(l, int32(hi))
				for _, r := range l[from:to] {
					s, g := int(t.slot[r]), t.grad[r]
					for f, b := range t.rowBins[int(r)*nf : int(r)*nf+nf] {
						e := &h[base[f]+s*t.nb[f]+int(b)]
						e.g += g
						e.n++
					}
				}
			}
			return
		}
		slot, grad, bins := t.slot[lo:hi], t.grad[lo:hi], t.rowBins[lo*nf:hi*nf]
		for i, s := range slot {
			if s < 0 {
				continue
			}
			g := grad[i]
			rb := bins[i*nf : i*nf+nf]
			for f, b := range rb {
				e := &h[base[f]+int(s)*t.nb[f]+int(b)]
				e.g += g
				e.n++
			}
		}
	})
	t.forEach(nf, func(f int) {
		nb := t.nb[f]
		fs := nb * slots
		if cap(t.hist[f]) < fs {
			t.hist[f] = make([]nodeStat, fs)
		}
		h := t.hist[f][:fs]
		for s := range slots {
			if sib != nil && sib[s] >= 0 {
				continue
			}
			dst := h[s*nb : (s+1)*nb]
			copy(dst, t.parts[0][off[f]*slots+s*nb:])
			for p := 1; p < histParts; p++ {
				src := t.parts[p][off[f]*slots+s*nb:]
				for b := range dst {
					dst[b].g += src[b].g
					dst[b].n += src[b].n
				}
			}
		}
		for s := range slots {
			if sib == nil || sib[s] < 0 {
				continue
			}
			dst, p, o := h[s*nb:(s+1)*nb], t.prev[f][int(par[s])*nb:], h[int(sib[s])*nb:]
			for b := range dst {
				dst[b] = nodeStat{p[b].g - o[b].g, p[b].n - o[b].n}
			}
		}
		t.hist[f] = h
	})
}

// histTotal is the sum of a slot's histogram (over feature 0's bins).
func (t *trainer) histTotal(s int) nodeStat {
	nb := t.nb[0]
	var st nodeStat
	for _, e := range t.hist[0][s*nb : (s+1)*nb] {
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
		h := t.hist[f][s*nb : (s+1)*nb]
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
			h := t.hist[f][s*nb : (s+1)*nb]
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
	nb := t.nb[bf]
	for s := range open {
		var gl float64
		var nl int64
		for b := 0; b <= bb; b++ {
			gl += t.hist[bf][s*nb+b].g
			nl += t.hist[bf][s*nb+b].n
		}
		cands[s] = candidate{gain: bg, feature: bf, bin: bb, left: nodeStat{gl, nl}}
	}
	return cands
}
