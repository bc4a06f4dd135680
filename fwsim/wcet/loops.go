package wcet

// WCET: natural loops, and the counted loops the analysis bounds itself.

import (
	"slices"
	"sort"

	"github.com/nicc-dev/nicc/fwsim"
)

type graph struct {
	n   int
	out [][]wedge
	pcs []uint64
}

type loop struct {
	head    int
	body    map[int]bool // head included
	bound   int
	counted bool
}

type irreducible struct{ at, head int }

func (e *irreducible) Error() string { return "irreducible" }

// loops finds the natural loops (merged by head), innermost first, and fails on a cycle
// that is not one (irreducible control flow).
func (g *graph) loops(entry int) ([]*loop, error) {
	// Depth-first order, iteratively.
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, g.n)
	post := make([]int, 0, g.n)
	type frame struct{ v, i int }
	var retreat [][2]int
	stack := []frame{{entry, 0}}
	color[entry] = grey
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i < len(g.out[top.v]) {
			e := g.out[top.v][top.i]
			top.i++
			if e.to == exitNode {
				continue
			}
			switch color[e.to] {
			case white:
				color[e.to] = grey
				stack = append(stack, frame{e.to, 0})
			case grey:
				retreat = append(retreat, [2]int{top.v, e.to})
			}
			continue
		}
		color[top.v] = black
		post = append(post, top.v)
		stack = stack[:len(stack)-1]
	}
	if len(retreat) == 0 {
		return nil, nil
	}
	// Dominators (Cooper, Harvey, Kennedy) over reverse postorder.
	order := make([]int, g.n) // postorder number
	for i := range order {
		order[i] = -1
	}
	for i, v := range post {
		order[v] = i
	}
	preds := make([][]int, g.n)
	for v := 0; v < g.n; v++ {
		if order[v] < 0 {
			continue
		}
		for _, e := range g.out[v] {
			if e.to != exitNode {
				preds[e.to] = append(preds[e.to], v)
			}
		}
	}
	idom := make([]int, g.n)
	for i := range idom {
		idom[i] = -1
	}
	idom[entry] = entry
	intersect := func(x, y int) int {
		for x != y {
			for order[x] < order[y] {
				x = idom[x]
			}
			for order[y] < order[x] {
				y = idom[y]
			}
		}
		return x
	}
	for changed := true; changed; {
		changed = false
		for i := len(post) - 1; i >= 0; i-- {
			v := post[i]
			if v == entry {
				continue
			}
			nd := -1
			for _, p := range preds[v] {
				if idom[p] < 0 {
					continue
				}
				if nd < 0 {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd != idom[v] {
				idom[v] = nd
				changed = true
			}
		}
	}
	dominates := func(h, v int) bool {
		for {
			if v == h {
				return true
			}
			if v == entry {
				return false
			}
			v = idom[v]
		}
	}
	byHead := map[int]*loop{}
	var heads []int
	for _, r := range retreat {
		src, h := r[0], r[1]
		if !dominates(h, src) {
			return nil, &irreducible{at: src, head: h}
		}
		l := byHead[h]
		if l == nil {
			l = &loop{head: h, body: map[int]bool{h: true}}
			byHead[h] = l
			heads = append(heads, h)
		}
		// Everything that reaches src without passing h.
		work := []int{src}
		for len(work) > 0 {
			v := work[len(work)-1]
			work = work[:len(work)-1]
			if l.body[v] {
				continue
			}
			l.body[v] = true
			work = append(work, preds[v]...)
		}
	}
	out := make([]*loop, 0, len(heads))
	for _, h := range heads {
		out = append(out, byHead[h])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].body) != len(out[j].body) {
			return len(out[i].body) < len(out[j].body)
		}
		return out[i].head < out[j].head
	})
	return out, nil
}

// latches are the addresses of the loop's nodes with an edge to its head, sorted.
func (g *graph) latches(l *loop) []uint64 {
	var out []uint64
	for v := range l.body {
		for _, e := range g.out[v] {
			if e.to == l.head {
				out = append(out, g.pcs[v])
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// countedLoop recognises a simple counted loop and returns its bound. The loop has no inner
// loop and no call, and its only back edge is the taken edge of `bne t, u` (the not-taken
// edge leaves the loop). In the loop t is written by exactly one `addi t, t, s` or `addiw t,
// t, s` (s != 0) that every path from the head to the branch passes, and u (which may be
// zero) is not written at all. The loop is entered by a single edge, from a straight run of
// code that leaves t and u link-time constants c and k, with |c|, |k| < 2^30 and (k - c)
// a positive multiple of s. Then after the head's j-th run t = c + j·s at the branch, so the
// head runs exactly (k - c) / s times per entry unless the loop exits earlier.
func (b *fbuild) countedLoop(g *graph, l *loop, all []*loop) (int, bool) {
	for _, o := range all {
		if o != l && l.body[o.head] {
			return 0, false
		}
	}
	var back []int
	for v := range l.body {
		for _, e := range g.out[v] {
			if e.to == l.head {
				back = append(back, v)
			}
		}
	}
	if len(back) != 1 {
		return 0, false
	}
	br := b.insts[g.pcs[back[0]]]
	if br.Kind != fwsim.BNE {
		return 0, false
	}
	if tgt, _ := br.Target(); tgt != g.pcs[l.head] || br.Next() == tgt {
		return 0, false
	}
	// Which operand steps: exactly one of them is written in the loop.
	written := map[uint8][]int{}
	for v := range l.body {
		in := b.insts[g.pcs[v]]
		if (in.Kind == fwsim.JAL || in.Kind == fwsim.JALR) && in.Rd != 0 {
			return 0, false
		}
		if writesRd(in) {
			written[in.Rd] = append(written[in.Rd], v)
		}
	}
	t, u := br.Rs1, br.Rs2
	if len(written[t]) == 0 {
		t, u = u, t
	}
	if t == 0 || len(written[t]) != 1 || len(written[u]) != 0 {
		return 0, false
	}
	dec := written[t][0]
	step := b.insts[g.pcs[dec]]
	if (step.Kind != fwsim.ADDI && step.Kind != fwsim.ADDIW) || step.Rs1 != t || step.Imm == 0 {
		return 0, false
	}
	// Every path from the head to the branch passes the step: without it, the branch is
	// unreachable.
	seen := map[int]bool{l.head: true}
	work := []int{l.head}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		if v == dec {
			continue
		}
		for _, e := range g.out[v] {
			if e.to != exitNode && l.body[e.to] && !seen[e.to] {
				seen[e.to] = true
				work = append(work, e.to)
			}
		}
	}
	if seen[back[0]] {
		return 0, false
	}
	// A single entry edge, and the values of t and u on it.
	entries := 0
	var from int
	for v := 0; v < g.n; v++ {
		if l.body[v] {
			continue
		}
		for _, e := range g.out[v] {
			if e.to == l.head {
				entries++
				from = v
			}
		}
	}
	if entries != 1 {
		return 0, false
	}
	fin := b.insts[g.pcs[from]]
	c, ok1 := b.valueAfter(fin, t)
	k, ok2 := b.valueAfter(fin, u)
	const lim = 1 << 30
	if !ok1 || !ok2 || c <= -lim || c >= lim || k <= -lim || k >= lim {
		return 0, false
	}
	d := k - c
	if d%step.Imm != 0 || d/step.Imm <= 0 {
		return 0, false
	}
	return int(d / step.Imm), true
}
