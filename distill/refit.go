package distill

import (
	"math"
	"math/bits"
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// leavesAt is, per tree, the leaf (node index) each of n rows of the column-major x reaches,
// run on t's threads. The refit changes leaf values only, so the held-out set is walked once.
func (t *trainer) leavesAt(trees []model.Tree, x [][]float64, n int) [][]uint16 {
	leaves := make([][]uint16, len(trees))
	for i := range leaves {
		leaves[i] = make([]uint16, n)
	}
	flat := make([]flatTree, len(trees))
	for i := range trees {
		flat[i] = flatten(&trees[i])
	}
	t.forRows(n, func(lo, hi int) {
		// A level of a tree at a time for all the chunk's rows: each row's step depends on
		// its last, so stepping many rows at once overlaps their latencies.
		node := make([]uint32, hi-lo)
		for ti, ft := range flat {
			clear(node)
			for range ft.depth {
				for r, i := range node {
					// right (the sign of thr − v) when v > thr; v and thr are finite.
					right := math.Float64bits(ft.thr[i]-x[ft.feat[i]][lo+r]) >> 63
					node[r] = ft.kids[2*i+uint32(right)]
				}
			}
			for r, i := range node {
				leaves[ti][lo+r] = uint16(i)
			}
		}
	})
	return leaves
}

// predict is base + Σ trees (in order) at the n rows whose leaves are given (leavesAt).
func (t *trainer) predict(base float64, trees []model.Tree, leaves [][]uint16, n int) []float64 {
	p := make([]float64, n)
	t.forRows(n, func(lo, hi int) {
		pc := p[lo:hi]
		for r := range pc {
			pc[r] = base
		}
		for ti, tr := range trees {
			nodes := tr.Nodes
			for r, i := range leaves[ti][lo:hi] {
				pc[r] += nodes[i].Value
			}
		}
	})
	return p
}

// flatTree is a tree as flat arrays for branch-free evaluation: a leaf is its own child (with
// threshold 0), so every row takes depth steps.
type flatTree struct {
	feat  []int
	thr   []float64
	kids  []uint32 // node i's children: kids[2i] (v ≤ thr), kids[2i+1]
	depth int
}

func flatten(tr *model.Tree) flatTree {
	nodes := tr.Nodes
	ft := flatTree{feat: make([]int, len(nodes)), thr: make([]float64, len(nodes)), kids: make([]uint32, 2*len(nodes))}
	for i, nd := range nodes {
		if nd.Leaf {
			ft.kids[2*i], ft.kids[2*i+1] = uint32(i), uint32(i)
			continue
		}
		// + 0: thr − v must be +0, not −0, when v equals a zero threshold.
		ft.feat[i], ft.thr[i] = nd.Feature, nd.Threshold+0
		ft.kids[2*i], ft.kids[2*i+1] = uint32(nd.Left), uint32(nd.Right)
	}
	ft.depth = tr.Depth()
	return ft
}

// maxGroupKeys bounds (old groups × leaves) for finish's fused group split; beyond it refine
// splits the groups with a map.
var maxGroupKeys = 1 << 24

// renumber finishes the group split finish fused into its pass: t.gid holds each row's key
// old group·len(leaves) + the number of its leaf (leaves[number] is its node), and each half
// marked the keys it met. The new groups are the keys met, numbered in ascending order (a
// key's rank among them: t.rankOf); t.gid keeps the keys until settleGroups or the next
// finish ranks them. solve numbers the groups in order of first appearance, as refine does.
func (t *trainer) renumber(leaves []uint16) {
	met := t.halves[0].seen
	for p := 1; p < histParts; p++ {
		for w, b := range t.halves[p].seen {
			met[w] |= b
		}
	}
	t.rankBits = append(t.rankBits[:0], met...)
	t.rankBase = resize(t.rankBase, len(met))
	var from []int32
	var leafOf []uint16
	nl := int32(len(leaves))
	for w, b := range met {
		t.rankBase[w] = int32(len(from))
		for ; b != 0; b &= b - 1 {
			k := int32(w*64 + bits.TrailingZeros64(b))
			from, leafOf = append(from, k/nl), append(leafOf, leaves[k%nl])
		}
	}
	t.gidKeyed = true
	t.addGroups(from, leafOf)
}

// rankOf is key k's group after renumber: its rank among the keys met.
func (t *trainer) rankOf(k int32) int32 {
	w := k >> 6
	return t.rankBase[w] + int32(bits.OnesCount64(t.rankBits[w]&(1<<(k&63)-1)))
}

// settleGroups makes t.gid the rows' groups when it holds renumber's keys (finish's next
// pass ranks them itself).
func (t *trainer) settleGroups() {
	if !t.gidKeyed {
		return
	}
	t.forRows(t.n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t.gid[r] = t.rankOf(t.gid[r])
		}
	})
	t.gidKeyed = false
}

// orderGroups renumbers the groups in order of first appearance in the rows (refine's order,
// which fixes the order of solve's sums) and returns each group's row count, and sum of
// targets and of their squares (in row order).
func (t *trainer) orderGroups() (cnt, sy, sy2 []float64) {
	t.settleGroups()
	G := t.ngroups
	perm := make([]int32, G)
	seen := make([]bool, G)
	sums := make([][3]float64, G) // count, Σy, Σy²: one cache line, not three, per row
	next := int32(0)
	for r, g := range t.gid {
		if !seen[g] {
			seen[g] = true
			perm[g] = next
			next++
		}
		s, y := &sums[perm[g]], t.y[r]
		s[0]++
		s[1] += y
		s[2] += y * y
	}
	cnt, sy, sy2 = make([]float64, G), make([]float64, G), make([]float64, G)
	for g, s := range sums {
		cnt[g], sy[g], sy2[g] = s[0], s[1], s[2]
	}
	t.forRows(t.n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t.gid[r] = perm[t.gid[r]]
		}
	})
	last := &t.splits[len(t.splits)-1]
	from, leafOf := make([]int32, t.ngroups), make([]uint16, t.ngroups)
	for g, p := range perm {
		from[p], leafOf[p] = last.from[g], last.leafOf[g]
	}
	last.from, last.leafOf = from, leafOf
	return cnt, sy, sy2
}

// refine splits the row groups by the leaves (t.nid, nodes tree nodes) of the tree just grown,
// when there are too many (old group, leaf) keys for renumber's tables.
func (t *trainer) refine(nodes int) {
	var from []int32 // per new group: its old group
	var leafOf []uint16
	table := make(map[uint64]int32)
	for r, g := range t.gid {
		l := t.nid[r]
		k := uint64(g)*uint64(nodes) + uint64(l)
		id, ok := table[k]
		if !ok {
			id = int32(len(from))
			from = append(from, g)
			leafOf = append(leafOf, l)
			table[k] = id
		}
		t.gid[r] = id
	}
	t.addGroups(from, leafOf)
}

// addGroups makes the new groups the groups: from[g] is new group g's old group, leafOf[g]
// its leaf in the tree just grown.
func (t *trainer) addGroups(from []int32, leafOf []uint16) {
	t.splits = append(t.splits, groupSplit{from, leafOf})
	t.ngroups = len(from)
}

// groupSplit is how one tree split the row groups: new group g came from old group from[g]
// and reaches leaf leafOf[g].
type groupSplit struct {
	from   []int32
	leafOf []uint16
}

// groupLeaves sets every group's leaf in every tree, groupLeaf[tree][group], worked out from
// the splits, the last first.
func (t *trainer) groupLeaves() {
	t.groupLeaf = make([][]uint16, len(t.splits))
	for ti := range t.groupLeaf {
		t.groupLeaf[ti] = make([]uint16, t.ngroups)
	}
	// Each group's ancestors are its own: the groups are split among the threads.
	t.forEach(histParts, func(p int) {
		lo, hi := p*t.ngroups/histParts, (p+1)*t.ngroups/histParts
		anc := make([]int32, hi-lo) // each group's ancestor after tree ti
		for i := range anc {
			anc[i] = int32(lo + i)
		}
		for ti := len(t.splits) - 1; ti >= 0; ti-- {
			sp, gl := t.splits[ti], t.groupLeaf[ti][lo:hi]
			for i, a := range anc {
				gl[i] = sp.leafOf[a]
				anc[i] = sp.from[a]
			}
		}
	})
}

// refit jointly refits every leaf value and the base by coordinate descent on the training
// set, and keeps the result if the RMSE on valid falls below before. Rows in one group are
// identical to the ensemble, so the descent runs on the groups' counts and target sums.
func (t *trainer) refit(valid *Dataset, leaves [][]uint16, before float64) (float64, bool) {
	if len(t.splits) != len(t.trees) {
		return 0, false
	}
	base, trees, gp := t.solve(1e-10)
	// The refit model, checked on valid.
	after := rmse(t.predict(base, trees, leaves, valid.Rows()), valid.Y)
	if !(after < before) {
		return 0, false
	}
	t.apply(base, trees, gp)
	return after, true
}

// apply makes base and trees the ensemble, gp being its prediction per row group.
func (t *trainer) apply(base float64, trees []model.Tree, gp []float64) {
	t.base, t.trees = base, trees
	t.rootSummed = false
	t.forRows(t.n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t.grad[r] = gp[t.gid[r]] - t.y[r]
		}
	})
}

// solve is the refit: the jointly refit base and trees, and the prediction per row group. It
// stops when a pass lowers the training loss by less than a relative tol.
func (t *trainer) solve(tol float64) (float64, []model.Tree, []float64) {
	cnt, sy, sy2 := t.orderGroups()
	t.groupLeaves()
	G := t.ngroups
	base := t.base
	vals := make([][]float64, len(t.trees))
	gp := make([]float64, G)
	for g := range gp {
		gp[g] = base
	}
	for ti, tr := range t.trees {
		vals[ti] = make([]float64, len(tr.Nodes))
		for i, n := range tr.Nodes {
			vals[ti][i] = n.Value
		}
		for g, l := range t.groupLeaf[ti] {
			gp[g] += vals[ti][l]
		}
	}
	if b, ok := t.exactSolve(cnt, sy, vals); ok {
		base = b
		for g := range gp {
			gp[g] = base
		}
		for ti := range t.trees {
			for g, l := range t.groupLeaf[ti] {
				gp[g] += vals[ti][l]
			}
		}
		return base, t.withValues(vals), gp
	}
	sse := func() float64 {
		s := 0.0
		for g := range gp {
			s += sy2[g] - 2*gp[g]*sy[g] + cnt[g]*gp[g]*gp[g]
		}
		return s
	}
	passes := t.opt.RefitPasses
	if passes == 0 {
		passes = DefaultRefitPasses
	}
	prev := sse()
	for range passes {
		for ti := range t.trees {
			v, gl := vals[ti], t.groupLeaf[ti]
			s := make([]float64, len(v))
			c := make([]float64, len(v))
			for g, l := range gl {
				s[l] += sy[g] - cnt[g]*(gp[g]-v[l])
				c[l] += cnt[g]
			}
			delta := make([]float64, len(v))
			for l := range v {
				if d := c[l] + t.lambda; c[l] > 0 && d > 0 {
					nv := s[l] / d
					delta[l] = nv - v[l]
					v[l] = nv
				}
			}
			for g, l := range gl {
				gp[g] += delta[l]
			}
		}
		s, c := 0.0, 0.0
		for g := range gp {
			s += sy[g] - cnt[g]*gp[g]
			c += cnt[g]
		}
		db := s / c
		base += db
		for g := range gp {
			gp[g] += db
		}
		cur := sse()
		if !(prev-cur > tol*prev) {
			break
		}
		prev = cur
	}
	return base, t.withValues(vals), gp
}

// withValues is a copy of t.trees with leaf values vals[tree][node].
func (t *trainer) withValues(vals [][]float64) []model.Tree {
	trees := make([]model.Tree, len(t.trees))
	for ti, tr := range t.trees {
		nodes := slices.Clone(tr.Nodes)
		for i := range nodes {
			if nodes[i].Leaf {
				nodes[i].Value = vals[ti][i]
			}
		}
		trees[ti] = model.Tree{Nodes: nodes}
	}
	return trees
}

// exactRefit enables exactSolve (tests compare it with coordinate descent).
var exactRefit = true

// maxExact is the most unknowns (leaves + 1) exactSolve takes on.
const maxExact = 640

// exactSolve solves the refit's ridge least-squares problem exactly: the normal equations over
// the unknowns (base, every leaf), built from the groups' counts and target sums, by Cholesky.
// It writes the leaves into vals and returns the base; ok is false (vals untouched) when there
// are too many unknowns or the system is not positive definite (λ = 0 makes it singular).
func (t *trainer) exactSolve(cnt, sy []float64, vals [][]float64) (float64, bool) {
	idx := make([][]int, len(t.trees)) // per tree, per node: unknown index (leaves)
	L := 1
	for ti, tr := range t.trees {
		idx[ti] = make([]int, len(tr.Nodes))
		for i, n := range tr.Nodes {
			if n.Leaf {
				idx[ti][i] = L
				L++
			}
		}
	}
	if L > maxExact || t.lambda <= 0 || !exactRefit {
		return 0, false
	}
	// The counts are summed in parallel over fixed ranges of groups, then added: whole
	// numbers, so exactly, in any order. The right-hand side is summed in group order.
	var part [histParts][]float64
	G := len(cnt)
	t.forEach(histParts, func(p int) {
		a := make([]float64, L*L)
		vars := make([]int, len(t.trees)+1)
		for g := p * G / histParts; g < (p+1)*G/histParts; g++ {
			for ti := range t.trees {
				vars[ti+1] = idx[ti][t.groupLeaf[ti][g]]
			}
			c := cnt[g]
			for k, i := range vars { // vars ascend: only the lower triangle, which Cholesky reads
				row := a[i*L:]
				for _, j := range vars[:k+1] {
					row[j] += c
				}
			}
		}
		part[p] = a
	})
	a := part[0]
	for _, o := range part[1:] {
		for i, v := range o {
			a[i] += v
		}
	}
	rhs := make([]float64, L)
	for g, s := range sy {
		rhs[0] += s
		for ti := range t.trees {
			rhs[idx[ti][t.groupLeaf[ti][g]]] += s
		}
	}
	for i := 1; i < L; i++ {
		a[i*L+i] += t.lambda
	}
	// Cholesky a = R Rᵀ in the lower triangle. The rows below a column are independent: they
	// are worked out in parallel, in blocks.
	const block = 64
	for j := range L {
		d := a[j*L+j]
		for k := range j {
			d -= a[j*L+k] * a[j*L+k]
		}
		if !(d > 0) {
			return 0, false
		}
		d = math.Sqrt(d)
		a[j*L+j] = d
		rows := L - j - 1
		t.forEach((rows+block-1)/block, func(b int) {
			rj := a[j*L : j*L+j]
			for i := j + 1 + b*block; i < min(L, j+1+(b+1)*block); i++ {
				v := a[i*L+j]
				ri := a[i*L : i*L+j]
				for k := range ri {
					v -= ri[k] * rj[k]
				}
				a[i*L+j] = v / d
			}
		})
	}
	x := rhs
	for i := range L { // R y = rhs
		v := x[i]
		for k := range i {
			v -= a[i*L+k] * x[k]
		}
		x[i] = v / a[i*L+i]
	}
	for i := L - 1; i >= 0; i-- { // Rᵀ x = y
		v := x[i]
		for k := i + 1; k < L; k++ {
			v -= a[k*L+i] * x[k]
		}
		x[i] = v / a[i*L+i]
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
	}
	for ti := range t.trees {
		for i, k := range idx[ti] {
			if k > 0 {
				vals[ti][i] = x[k]
			}
		}
	}
	return x[0], true
}

// rmse is the root mean squared difference of p and y.
func rmse(p, y []float64) float64 {
	if len(y) == 0 {
		return math.NaN()
	}
	s := 0.0
	for i := range y {
		d := p[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(y)))
}
