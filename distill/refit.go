package distill

import (
	"math"
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// predict is the ensemble's prediction for n rows of the column-major x.
func (t *trainer) predict(x [][]float64, n int) []float64 {
	return predict(t.base, t.trees, x, n, t)
}

// predict is base + Σ trees at n rows of the column-major x, run on t's threads.
func predict(base float64, trees []model.Tree, x [][]float64, n int, t *trainer) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = base
	}
	for i := range trees {
		t.addTree(&trees[i], x, p)
	}
	return p
}

// addTree adds tree tr's value at every row of the column-major x to pred.
func (t *trainer) addTree(tr *model.Tree, x [][]float64, pred []float64) {
	nodes := tr.Nodes
	t.forRows(len(pred), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			n := &nodes[0]
			for !n.Leaf {
				if x[n.Feature][r] <= n.Threshold {
					n = &nodes[n.Left]
				} else {
					n = &nodes[n.Right]
				}
			}
			pred[r] += n.Value
		}
	})
}

// refine splits the row groups by the leaves (t.nid, nodes tree nodes) of the tree just grown.
func (t *trainer) refine(nodes int) {
	if t.gid == nil {
		t.gid = make([]int32, t.n)
		t.ngroups = 1
	}
	old := t.ngroups
	var from []int32 // per new group: its old group
	var leafOf []uint16
	newGroup := func(g int32, l uint16) int32 {
		from = append(from, g)
		leafOf = append(leafOf, l)
		return int32(len(from) - 1)
	}
	if old*nodes <= 1<<24 {
		table := make([]int32, old*nodes)
		for i := range table {
			table[i] = -1
		}
		for r, g := range t.gid {
			l := t.nid[r]
			k := int(g)*nodes + int(l)
			if table[k] < 0 {
				table[k] = newGroup(g, l)
			}
			t.gid[r] = table[k]
		}
	} else {
		table := make(map[uint64]int32)
		for r, g := range t.gid {
			l := t.nid[r]
			k := uint64(g)<<16 | uint64(l)
			id, ok := table[k]
			if !ok {
				id = newGroup(g, l)
				table[k] = id
			}
			t.gid[r] = id
		}
	}
	for ti, gl := range t.groupLeaf {
		ngl := make([]uint16, len(from))
		for g, f := range from {
			ngl[g] = gl[f]
		}
		t.groupLeaf[ti] = ngl
	}
	t.groupLeaf = append(t.groupLeaf, leafOf)
	t.ngroups = len(from)
}

// refit jointly refits every leaf value and the base by coordinate descent on the training
// set, and keeps the result if the RMSE on valid falls below before. Rows in one group are
// identical to the ensemble, so the descent runs on the groups' counts and target sums.
func (t *trainer) refit(valid *Dataset, before float64) (float64, bool) {
	if len(t.groupLeaf) != len(t.trees) {
		return 0, false
	}
	base, trees, gp := t.solve(1e-10)
	// The refit model, checked on valid.
	after := rmse(predict(base, trees, valid.X, valid.Rows(), t), valid.Y)
	if !(after < before) {
		return 0, false
	}
	t.apply(base, trees, gp)
	return after, true
}

// apply makes base and trees the ensemble, gp being its prediction per row group.
func (t *trainer) apply(base float64, trees []model.Tree, gp []float64) {
	t.base, t.trees = base, trees
	t.forRows(t.n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t.pred[r] = gp[t.gid[r]]
			t.grad[r] = t.pred[r] - t.y[r]
		}
	})
}

// solve is the refit: the jointly refit base and trees, and the prediction per row group. It
// stops when a pass lowers the training loss by less than a relative tol.
func (t *trainer) solve(tol float64) (float64, []model.Tree, []float64) {
	G := t.ngroups
	cnt, sy, sy2 := make([]float64, G), make([]float64, G), make([]float64, G)
	for r, g := range t.gid {
		cnt[g]++
		sy[g] += t.y[r]
		sy2[g] += t.y[r] * t.y[r]
	}
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
	a := make([]float64, L*L)
	rhs := make([]float64, L)
	vars := make([]int, len(t.trees)+1)
	for g := range cnt {
		vars[0] = 0
		for ti := range t.trees {
			vars[ti+1] = idx[ti][t.groupLeaf[ti][g]]
		}
		c := cnt[g]
		for _, i := range vars {
			rhs[i] += sy[g]
			row := a[i*L:]
			for _, j := range vars {
				row[j] += c
			}
		}
	}
	for i := 1; i < L; i++ {
		a[i*L+i] += t.lambda
	}
	// Cholesky a = R Rᵀ in the lower triangle.
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
		for i := j + 1; i < L; i++ {
			v := a[i*L+j]
			ri, rj := a[i*L:i*L+j], a[j*L:j*L+j]
			for k := range ri {
				v -= ri[k] * rj[k]
			}
			a[i*L+j] = v / d
		}
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
