package distill

import (
	"math"
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// leavesAt is, per tree, the leaf (node index) each of n rows of the column-major x reaches.
// The refit changes leaf values only, so the held-out set is walked once.
func leavesAt(pl pool, trees []model.Tree, x [][]float64, n int) [][]uint16 {
	leaves := make([][]uint16, len(trees))
	for i := range leaves {
		leaves[i] = make([]uint16, n)
	}
	walk(pl, trees, x, n, func(ti, lo int, node []uint32) {
		out := leaves[ti][lo:][:len(node)]
		for r, i := range node {
			out[r] = uint16(i)
		}
	})
	return leaves
}

// predictAt is base + Σ trees (in order) at the n rows of the column-major x: predict's
// sums, each tree's values added as the rows reach its leaves (no leaves kept).
func predictAt(pl pool, base float64, trees []model.Tree, x [][]float64, n int) []float64 {
	p := make([]float64, n)
	vals := make([][]float64, len(trees))
	for ti, tr := range trees {
		vals[ti] = make([]float64, len(tr.Nodes))
		for i, nd := range tr.Nodes {
			vals[ti][i] = nd.Value
		}
	}
	for r := range p {
		p[r] = base
	}
	walk(pl, trees, x, n, func(ti, lo int, node []uint32) {
		pc, v := p[lo:][:len(node)], vals[ti]
		for r, i := range node {
			pc[r] += v[i]
		}
	})
	return p
}

// walkRows is how many rows walk steps through a tree together: their states (row-major) and
// nodes stay in the first-level cache for all the trees.
const walkRows = 256

// walk takes the n rows of the column-major x through every tree, a block of walkRows rows
// at a time, and calls visit(ti, lo, node) with the leaf of rows lo.. in tree ti, the trees
// of a block in order (blocks in parallel).
func walk(pl pool, trees []model.Tree, x [][]float64, n int, visit func(ti, lo int, node []uint32)) {
	flat := make([]flatTree, len(trees))
	for i := range trees {
		flat[i] = flatten(&trees[i])
	}
	pl.forRows(n, func(lo, hi int) {
		xb := make([]float64, walkRows*len(x)) // the block's states: feature f's at f·walkRows
		node := make([]uint32, walkRows)
		for b := lo; b < hi; b += walkRows {
			m := min(hi-b, walkRows)
			for f, col := range x {
				copy(xb[f*walkRows:], col[b:b+m])
			}
			nd := node[:m]
			for ti, ft := range flat {
				// A level at a time for all the block's rows: each row's step depends on its
				// last, so stepping many rows at once overlaps their latencies. Every row
				// starts at the root (a leaf, when the tree has depth 0).
				if ft.depth == 0 {
					clear(nd)
				} else {
					root := &ft.nodes[0]
					for r, v := range xb[root.off : root.off+uint32(m)] {
						// right (the sign of thr − v) when v > thr; v and thr are finite.
						nd[r] = root.kids[math.Float64bits(root.thr-v)>>63]
					}
				}
				for range ft.depth - 1 {
					for r, i := range nd {
						fn := &ft.nodes[i]
						nd[r] = fn.kids[math.Float64bits(fn.thr-xb[int(fn.off)+r])>>63]
					}
				}
				visit(ti, b, nd)
			}
		}
	})
}

// predict is base + Σ trees (in order) at the n rows whose leaves are given (leavesAt).
func predict(pl pool, base float64, trees []model.Tree, leaves [][]uint16, n int) []float64 {
	p := make([]float64, n)
	pl.forRows(n, func(lo, hi int) {
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

// flatTree is a tree as a flat array for branch-free evaluation: a leaf is its own child
// (with threshold 0), so every row takes depth steps.
type flatTree struct {
	nodes []flatNode
	depth int
}

// flatNode is a node of a flatTree: v ≤ thr goes to kids[0], else kids[1]; v is its
// feature's, at off (feature·walkRows) in walk's block.
type flatNode struct {
	thr  float64
	kids [2]uint32
	off  uint32
}

func flatten(tr *model.Tree) flatTree {
	ft := flatTree{nodes: make([]flatNode, len(tr.Nodes)), depth: tr.Depth()}
	for i, nd := range tr.Nodes {
		if nd.Leaf {
			ft.nodes[i].kids = [2]uint32{uint32(i), uint32(i)}
			continue
		}
		// + 0: thr − v must be +0, not −0, when v equals a zero threshold.
		ft.nodes[i] = flatNode{thr: nd.Threshold + 0, kids: [2]uint32{uint32(nd.Left), uint32(nd.Right)}, off: uint32(nd.Feature * walkRows)}
	}
	return ft
}

// refitProblem is what the refit solves: the ensemble's trees (their structure), every row
// group's leaf in each ([tree][group]), the groups' sums of the targets, and λ.
type refitProblem struct {
	trees     []model.Tree
	groupLeaf [][]uint16
	groupSums
	lambda float64
}

// refitted is a refit's ensemble: the base, the trees with their refit leaves, and its
// prediction per row group.
type refitted struct {
	base  float64
	trees []model.Tree
	gp    []float64
}

// solve refits base and trees (the ensemble the row groups g were split by) jointly, y being
// the rows' targets. It stops when a pass lowers the training loss by less than a relative tol.
func solve(pl pool, c *config, g *rowGroups, y []float64, base float64, trees []model.Tree, tol float64) refitted {
	pr := &refitProblem{trees: trees, groupSums: g.order(pl, y), groupLeaf: g.leaves(pl), lambda: c.lambda}
	vals := make([][]float64, len(trees))
	gp := make([]float64, g.ngroups)
	for i := range gp {
		gp[i] = base
	}
	for ti, tr := range trees {
		vals[ti] = make([]float64, len(tr.Nodes))
		for i, n := range tr.Nodes {
			vals[ti][i] = n.Value
		}
		for i, l := range pr.groupLeaf[ti] {
			gp[i] += vals[ti][l]
		}
	}
	if b, ok := exactSolve(pl, pr, vals); ok {
		base = b
		for i := range gp {
			gp[i] = base
		}
		for ti := range trees {
			for i, l := range pr.groupLeaf[ti] {
				gp[i] += vals[ti][l]
			}
		}
	} else {
		base = pr.descend(base, vals, gp, c.refitPasses, tol)
	}
	return refitted{base, withValues(trees, vals), gp}
}

// descend refits by coordinate descent from base, the leaves vals[tree][node] and the
// prediction per group gp (all updated in place): at most passes passes, each setting every
// tree's leaves, then the base, to their optimum given the rest; it stops once a pass lowers
// the loss by less than a relative tol. It returns the base.
func (pr *refitProblem) descend(base float64, vals [][]float64, gp []float64, passes int, tol float64) float64 {
	cnt, sy, sy2 := pr.cnt, pr.sy, pr.sy2
	sse := func() float64 {
		s := 0.0
		for g := range gp {
			s += sy2[g] - 2*gp[g]*sy[g] + cnt[g]*gp[g]*gp[g]
		}
		return s
	}
	prev := sse()
	for range passes {
		for ti := range pr.trees {
			v, gl := vals[ti], pr.groupLeaf[ti]
			s := make([]float64, len(v))
			c := make([]float64, len(v))
			for g, l := range gl {
				s[l] += sy[g] - cnt[g]*(gp[g]-v[l])
				c[l] += cnt[g]
			}
			delta := make([]float64, len(v))
			for l := range v {
				if d := c[l] + pr.lambda; c[l] > 0 && d > 0 {
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
	return base
}

// withValues is a copy of trees with leaf values vals[tree][node].
func withValues(trees []model.Tree, vals [][]float64) []model.Tree {
	out := make([]model.Tree, len(trees))
	for ti, tr := range trees {
		nodes := slices.Clone(tr.Nodes)
		for i := range nodes {
			if nodes[i].Leaf {
				nodes[i].Value = vals[ti][i]
			}
		}
		out[ti] = model.Tree{Nodes: nodes}
	}
	return out
}

// exactRefit enables exactSolve (tests compare it with coordinate descent).
var exactRefit = true

// maxExact is the most unknowns (leaves + 1) exactSolve takes on.
const maxExact = 640

// exactSolve solves the refit's ridge least-squares problem exactly: the normal equations over
// the unknowns (base, every leaf), built from the groups' counts and target sums, by Cholesky.
// It writes the leaves into vals and returns the base; ok is false (vals untouched) when there
// are too many unknowns or the system is not positive definite (λ = 0 makes it singular).
func exactSolve(pl pool, pr *refitProblem, vals [][]float64) (float64, bool) {
	trees, groupLeaf, cnt, sy := pr.trees, pr.groupLeaf, pr.cnt, pr.sy
	idx := make([][]int, len(trees)) // per tree, per node: unknown index (leaves)
	L := 1
	for ti, tr := range trees {
		idx[ti] = make([]int, len(tr.Nodes))
		for i, n := range tr.Nodes {
			if n.Leaf {
				idx[ti][i] = L
				L++
			}
		}
	}
	if L > maxExact || pr.lambda <= 0 || !exactRefit {
		return 0, false
	}
	// The counts are summed in parallel over fixed ranges of groups, then added: whole
	// numbers, so exactly, in any order. The right-hand side is summed in group order.
	var part [histParts][]float64
	G := len(cnt)
	pl.forEach(histParts, func(p int) {
		a := make([]float64, L*L)
		vars := make([]int, len(trees)+1)
		for g := p * G / histParts; g < (p+1)*G/histParts; g++ {
			for ti := range trees {
				vars[ti+1] = idx[ti][groupLeaf[ti][g]]
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
		for ti := range trees {
			rhs[idx[ti][groupLeaf[ti][g]]] += s
		}
	}
	for i := 1; i < L; i++ {
		a[i*L+i] += pr.lambda
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
		pl.forEach((rows+block-1)/block, func(b int) {
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
	for ti := range trees {
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
