package distill

import (
	"github.com/nicc-dev/nicc/model"
)

// score is G²/(H+λ), the loss reduction of a leaf with optimal value (0 when H+λ = 0).
func (c *config) score(g float64, n int64) float64 {
	d := float64(n) + c.lambda
	if d <= 0 {
		return 0
	}
	return g * g / d
}

// leafValue is −G/(H+λ)·η (0 when H+λ = 0).
func (c *config) leafValue(s nodeStat) float64 {
	d := float64(s.n) + c.lambda
	if d <= 0 {
		return 0
	}
	return -c.lr*s.g/d + 0 // + 0: no −0 leaves
}

// candidate is a split of one node: rows with bin ≤ bin go left.
type candidate struct {
	gain    float64
	feature int
	bin     int
	left    nodeStat
}

// grow builds one tree on the current residuals (st.grad), moves every row to its leaf and
// adds the tree to the gradients (finish), and reports whether it has any split. last says
// it is the last boosting round's (no next root to sum); grp, when set, gets the tree's split
// of the row groups.
func grow(pl pool, c *config, d *binned, hb *histBuilder, st *boostState, grp *rowGroups, last bool) (model.Tree, bool) {
	// Rows start at the root with gradients pred − y: startBoost, apply and the end of the
	// previous grow leave them so; the end of the previous grow also sums the root's
	// histogram parts, unless no tree was to follow or a refit has changed the gradients since.
	hb.startTree(pl, d, st.grad, st.nid)
	gt := growLevels(pl, c, d, hb, st)
	keep := gt.split || len(st.trees) == 0 // Train drops a tree without splits unless it is the first
	if !keep {
		grp = nil
	}
	finish(pl, d, hb, st, grp, gt.leafPass(c, keep), !last)
	return model.Tree{Nodes: gt.nodes}, gt.split
}

// grownTree is a tree as growLevels leaves it: its nodes (leaves without values yet), each
// node's gradient sum and count, and its last level's open nodes and their splits, whose rows
// finish moves on.
type grownTree struct {
	nodes     []model.Node
	stats     []nodeStat
	lastOpen  []int
	lastCands []candidate
	split     bool // some node splits
}

// growLevels grows a tree level by level down to its last level (c.depth): each open node
// takes its best split (or the level its best common split, when oblivious), and every row
// moves to its child, down to the last level (st.nid: each row's node, or its leaf if above).
func growLevels(pl pool, c *config, d *binned, hb *histBuilder, st *boostState) *grownTree {
	gt := &grownTree{nodes: []model.Node{{}}, stats: []nodeStat{{}}}
	open := []int{0}
	var sib, par []int32 // per slot of the level: see merge
	for depth := 0; len(open) > 0; depth++ {
		lh := hb.merge(pl, d, len(open), sib, par)
		if depth == 0 {
			gt.stats[0] = lh.total(0)
		}
		var cands []candidate // per open slot; gain 0 = no split
		if c.oblivious {
			cands = c.bestOblivious(pl, lh, open, gt.stats)
		} else {
			cands = make([]candidate, len(open))
			open, stats := open, gt.stats // as they are now: the closure's copies
			pl.forEach(len(open), func(s int) { cands[s] = c.bestSplit(lh, s, stats[open[s]]) })
		}
		var next []int
		sib, par = sib[:0], par[:0]
		var split []int // the nodes that split, in order: their children are next's pairs
		for s, nd := range open {
			cd := cands[s]
			if cd.gain <= 0 {
				continue
			}
			// Sum the smaller child; derive the larger.
			cs := int32(len(next))
			if 2*cd.left.n <= gt.stats[nd].n {
				sib, par = append(sib, -1, cs), append(par, -1, int32(s))
			} else {
				sib, par = append(sib, cs+1, -1), append(par, int32(s), -1)
			}
			split = append(split, nd)
			gt.split = true
			l, r := len(gt.nodes), len(gt.nodes)+1
			gt.nodes[nd] = model.Node{Feature: cd.feature, Threshold: d.edges[cd.feature][cd.bin], Cmp: model.CmpLE, Left: l, Right: r}
			ps := gt.stats[nd]
			gt.nodes = append(gt.nodes, model.Node{}, model.Node{})
			gt.stats = append(gt.stats, cd.left, nodeStat{ps.g - cd.left.g, ps.n - cd.left.n})
			next = append(next, l, r)
		}
		if depth == c.depth-1 {
			gt.lastOpen, gt.lastCands = open, cands // finish moves their rows to the leaves
			break
		}
		hb.descend()
		lv := levelSplits{step: make([]levelStep, len(gt.nodes)), children: len(next)}
		for i, sp := range stepsOf(gt.nodes, open, cands) {
			lv.step[i] = levelStep{lastStep: sp}
		}
		for j, nd := range split { // the summed child of each: sib < 0
			for side := range 2 {
				if cs := 2*j + side; sib[cs] < 0 {
					lv.step[nd].slot, lv.step[nd].take = int32(cs), 1<<side
				}
			}
		}
		pl.forEach(histParts, func(p int) { hb.partition(p, d, st.grad, st.nid, lv) })
		open = next
	}
	return gt
}

// leafPass is a grown tree as finish's pass over the rows reads it: per node its last step
// and its leaf value, and the leaves, numbered.
type leafPass struct {
	// step: a row at node i goes on to step[i].left, or the node after it when its bin of
	// step[i].feature is above step[i].bin (never, for a leaf: it stays).
	step []lastStep
	// val is each leaf's value (0 for the nodes, and for every node of a tree not kept).
	val []float64
	// leaves are the leaves' nodes in order, leafNum each leaf's number: the refit's group
	// keys take a leaf's number, not its node's.
	leafNum []int32
	leaves  []uint16
}

// lastStep is where a node's rows go: to left, or the node after it when their bin of
// feature is above bin (never, for a node that does not split: its rows stay).
type lastStep struct{ feature, bin, left int }

// stepsOf is every node's step as the open nodes split (cands; gain 0: no split): their
// children are the nodes' Left and Left+1.
func stepsOf(nodes []model.Node, open []int, cands []candidate) []lastStep {
	step := make([]lastStep, len(nodes))
	for i := range step {
		step[i] = lastStep{bin: histBins - 1, left: i}
	}
	for s, nd := range open {
		if cd := cands[s]; cd.gain > 0 {
			step[nd] = lastStep{cd.feature, cd.bin, nodes[nd].Left}
		}
	}
	return step
}

// leafPass turns gt's open nodes into leaves with their values (−G/(H+λ)·η) and returns
// what finish reads; keep false zeroes the values (the tree is dropped).
func (gt *grownTree) leafPass(c *config, keep bool) leafPass {
	nodes := gt.nodes
	lp := leafPass{step: stepsOf(nodes, gt.lastOpen, gt.lastCands)}
	lp.val = make([]float64, len(nodes))
	for i := range nodes {
		if nodes[i].Left == 0 {
			v := c.leafValue(gt.stats[i])
			nodes[i] = model.Node{Leaf: true, Value: v}
			lp.val[i] = v
		}
	}
	if !keep {
		clear(lp.val)
	}
	lp.leafNum = make([]int32, len(nodes))
	for i := range nodes {
		if nodes[i].Leaf {
			lp.leafNum[i] = int32(len(lp.leaves))
			lp.leaves = append(lp.leaves, uint16(i))
		}
	}
	return lp
}

// finish moves every row to its leaf (st.nid holds its node on the last level, or its leaf if
// that is above; it gets the leaf) and adds the tree (lp) to the gradients (prediction − y,
// updated in place: no prediction array to read and write), summing the next root's
// histograms when sum is set, one pass per half in row order; with grp set, it splits the
// row groups by the leaves (the pass's blocks of rows, in turn, when fused).
func finish(pl pool, d *binned, hb *histBuilder, st *boostState, grp *rowGroups, lp leafPass, sum bool) {
	refine := grp != nil
	keys, fused, keyed := 0, false, false
	if refine {
		keys = grp.ngroups * len(lp.leaves)
		fused = keys <= maxGroupKeys
		keyed = grp.keyed // grp.gid still holds the last renumber's keys
		if !fused {
			grp.settle(pl)
		}
	}
	nf := d.nf
	pl.forEach(histParts, func(p int) {
		var seen []uint64
		if fused {
			seen = grp.startSeen(p, keys)
		}
		// The next root's counts are the last root's: only the gradients are summed.
		h, lo, hi := hb.nextRoot(p)
		if !sum {
			h = nil
		}
		for blk := lo; blk < hi; blk += finishRows {
			end := min(hi, blk+finishRows)
			toLeaves(lp, st.grad[blk:end], st.nid[blk:end], d.rowBins[blk*nf:end*nf], nf, h)
			if fused {
				grp.splitRows(st.nid[blk:end], grp.gid[blk:end], lp.leafNum, int32(len(lp.leaves)), keyed, seen)
			}
		}
	})
	hb.markRoot(sum)
	switch {
	case fused:
		grp.renumber(lp.leaves)
	case refine:
		grp.refine(st.nid, len(lp.val))
	}
}

// finishRows is how many rows finish moves to their leaves before it splits their groups.
const finishRows = 1024

// toLeaves moves rows (their gradients grad, nodes nid and bins, nf a row) to their leaves
// by lp, adding the leaves' values to the gradients, and the new gradients into the root
// histogram h (one slot) unless it is nil.
func toLeaves(lp leafPass, grad []float64, nid []uint16, bins []uint8, nf int, h []nodeStat) {
	var hs [maxFeaturesFast]*[histBins]nodeStat
	if h != nil && nf <= maxFeaturesFast {
		for f := range nf {
			hs[f] = (*[histBins]nodeStat)(h[f*histBins:])
		}
	}
	step, val := lp.step, lp.val
	grad = grad[:len(nid)]
	for i, n := range nid {
		rb := bins[i*nf : i*nf+nf]
		sp := &step[n]
		l := sp.left + int(uint(sp.bin-int(rb[sp.feature]))>>63)
		nid[i] = uint16(l)
		g := grad[i] + val[l]
		grad[i] = g
		switch {
		case h == nil:
		case nf <= maxFeaturesFast:
			for f, b := range rb {
				hs[f][b].g += g
			}
		default:
			for f, b := range rb {
				h[f*histBins+int(b)].g += g
			}
		}
	}
}

// bestSplit is the best weighted-gain split of slot s with totals ps (gain 0: none).
func (c *config) bestSplit(lh levelHist, s int, ps nodeStat) candidate {
	best := candidate{}
	if ps.n < int64(2*c.minLeaf) {
		return best
	}
	parent := c.score(ps.g, ps.n)
	ml := int64(c.minLeaf)
	for f := range lh.nf {
		w := c.weights[f]
		if w == 0 {
			continue
		}
		nb := lh.nb[f]
		h := lh.of(s, f)
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
			gain := w * (c.score(gl, nl) + c.score(ps.g-gl, nr) - parent)
			if gain > best.gain && gain > c.minGain {
				best = candidate{gain: gain, feature: f, bin: b, left: nodeStat{gl, nl}}
			}
		}
	}
	return best
}

// bestOblivious picks one (feature, bin) for every open node, maximising the level's total
// weighted gain; every node gets that split (or none, if no split gains).
func (c *config) bestOblivious(pl pool, lh levelHist, open []int, stats []nodeStat) []candidate {
	type fbest struct {
		gain float64
		bin  int
	}
	per := make([]fbest, lh.nf)
	ml := int64(c.minLeaf)
	pl.forEach(lh.nf, func(f int) {
		w := c.weights[f]
		per[f] = fbest{bin: -1}
		if w == 0 {
			return
		}
		nb := lh.nb[f]
		total := make([]float64, nb-1)
		ok := make([]bool, nb-1)
		for b := range ok {
			ok[b] = true
		}
		for s, nd := range open {
			ps := stats[nd]
			parent := c.score(ps.g, ps.n)
			enforce := ps.n >= 2*ml
			h := lh.of(s, f)
			var gl float64
			var nl int64
			for b := 0; b < nb-1; b++ {
				gl += h[b].g
				nl += h[b].n
				if enforce && (nl < ml || ps.n-nl < ml) {
					ok[b] = false
				}
				total[b] += c.score(gl, nl) + c.score(ps.g-gl, ps.n-nl) - parent
			}
		}
		for b := range total {
			g := w * total[b]
			if ok[b] && g > per[f].gain && g > c.minGain {
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
		for _, e := range lh.of(s, bf)[:bb+1] {
			gl += e.g
			nl += e.n
		}
		cands[s] = candidate{gain: bg, feature: bf, bin: bb, left: nodeStat{gl, nl}}
	}
	return cands
}
