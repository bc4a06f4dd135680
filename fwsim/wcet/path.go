package wcet

// WCET: loop bounds applied, loops collapsed, and the longest path.

import (
	"fmt"
	"sort"
	"strings"
)

// solve turns the explored instructions into a graph, bounds its loops and takes the
// longest path.
func (b *fbuild) solve() error {
	pcs := make([]uint64, 0, len(b.insts))
	for pc := range b.insts {
		pcs = append(pcs, pc)
	}
	sort.Slice(pcs, func(i, j int) bool { return pcs[i] < pcs[j] })
	idx := make(map[uint64]int, len(pcs))
	for i, pc := range pcs {
		idx[pc] = i
	}
	n := len(pcs)
	g := &graph{n: n, out: make([][]wedge, n), pcs: pcs}
	for i, pc := range pcs {
		for _, e := range b.edges[pc] {
			to := exitNode
			if !e.exit {
				to = idx[e.to]
			}
			g.out[i] = append(g.out[i], wedge{to: to, w: e.w})
		}
	}
	entry := idx[b.f.addr]
	loops, err := g.loops(entry)
	if err != nil {
		if ie, ok := err.(*irreducible); ok {
			return b.errf(pcs[ie.at], ErrIrreducible, "a cycle is entered other than through one head (at 0x%x)", pcs[ie.head])
		}
		return err
	}
	// Bounds.
	var missing []string
	for _, l := range loops {
		head := pcs[l.head]
		n, ok := b.a.opt.LoopBounds[head]
		if ok {
			b.a.used[head] = true
			if n < 1 {
				return b.errf(head, ErrUnboundedLoop, "bound %d: a loop head runs at least once per entry", n)
			}
			l.bound = n
			continue
		}
		if n, ok := b.countedLoop(g, l, loops); ok {
			l.bound, l.counted = n, true
			continue
		}
		missing = append(missing, b.a.whereOr(head, b.f))
	}
	if len(missing) > 0 {
		first := loops[0].head
		for _, l := range loops {
			if l.bound == 0 {
				first = l.head
				break
			}
		}
		detail := fmt.Sprintf("the analysis cannot see how often it runs; bound head %s with the most times it runs per entry into the loop",
			b.a.whereOr(pcs[first], b.f))
		if len(missing) > 1 {
			detail += "; unbounded too: " + strings.Join(missing[1:], ", ")
		}
		return b.errf(pcs[first], ErrUnboundedLoop, "%s", detail)
	}
	// Collapse loops innermost first.
	rep := make([]int, n)
	for i := range rep {
		rep[i] = i
	}
	coll := map[int][]wedge{}
	for _, l := range loops {
		iter, exits, err := g.longest(l.head, l.head, l.body, rep, coll)
		if err != nil {
			return b.errf(pcs[l.head], ErrIrreducible, "%v", err)
		}
		if iter == nil {
			return b.errf(pcs[l.head], ErrIrreducible, "internal: loop has no back edge")
		}
		rest, ok := iter.mul(uint64(l.bound - 1))
		if !ok {
			return b.errf(pcs[l.head], ErrBadCode, "WCET overflows")
		}
		var ce []wedge
		var worst wt
		for _, e := range exits {
			w, ok := rest.add(e.w)
			if !ok {
				return b.errf(pcs[l.head], ErrBadCode, "WCET overflows")
			}
			if worst.less(w) {
				worst = w
			}
			ce = append(ce, wedge{to: e.to, w: w})
		}
		coll[l.head] = ce
		for v := range l.body {
			rep[v] = l.head
		}
		head := pcs[l.head]
		name, off, _ := b.a.locate(head, b.f)
		b.f.loops = append(b.f.loops, Loop{Func: name, Head: head, Offset: off,
			Bound: l.bound, Counted: l.counted, IterMax: iter.c, Cycles: worst.c, Latches: g.latches(l)})
	}
	_, exits, err := g.longest(rep[entry], -2, nil, rep, coll)
	if err != nil {
		return b.errf(b.f.addr, ErrIrreducible, "%v", err)
	}
	for _, e := range exits {
		if e.to == exitNode {
			b.f.returns = true
			b.f.w = e.w
		}
	}
	return nil
}

// longest takes the longest paths from start over the graph with collapsed loops: nodes are
// mapped through rep, and a node with collapsed edges uses them unless it is head (the loop
// being solved, whose own instruction edges are wanted). With body non-nil, only nodes in
// body are inside; edges back to head are the loop's iterations (their worst weight is iter,
// nil if none) and edges leaving body are exits. With body nil every node is inside and the
// exits are the edges to exitNode. exits holds the worst weight per target.
func (g *graph) longest(start, head int, body map[int]bool, rep []int, coll map[int][]wedge) (iter *wt, exits []wedge, err error) {
	outOf := func(v int) []wedge {
		if v != head {
			if c, ok := coll[v]; ok {
				return c
			}
		}
		return g.out[v]
	}
	inside := func(v int) bool { return v != exitNode && (body == nil || body[v]) }
	mapTo := func(v int) int {
		if v == exitNode {
			return v
		}
		return rep[v]
	}
	// Topological order of the inside nodes reachable from start, edges to head ignored.
	const (
		white = iota
		grey
		black
	)
	color := map[int]uint8{}
	var post []int
	type frame struct{ v, i int }
	stack := []frame{{start, 0}}
	color[start] = grey
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		es := outOf(top.v)
		if top.i < len(es) {
			to := mapTo(es[top.i].to)
			top.i++
			if to == head || !inside(to) {
				continue
			}
			switch color[to] {
			case white:
				color[to] = grey
				stack = append(stack, frame{to, 0})
			case grey:
				return nil, nil, fmt.Errorf("a cycle through 0x%x remains after collapsing loops", g.pcs[to])
			}
			continue
		}
		color[top.v] = black
		post = append(post, top.v)
		stack = stack[:len(stack)-1]
	}
	dist := map[int]wt{start: {}}
	worstExit := map[int]wt{}
	var exitOrder []int
	for i := len(post) - 1; i >= 0; i-- {
		v := post[i]
		d := dist[v]
		for _, e := range outOf(v) {
			w, ok := d.add(e.w)
			if !ok {
				return nil, nil, fmt.Errorf("WCET overflows")
			}
			to := mapTo(e.to)
			switch {
			case to == head:
				if iter == nil || iter.less(w) {
					iter = &w
				}
			case inside(to):
				if old, ok := dist[to]; !ok || old.less(w) {
					dist[to] = w
				}
			default:
				old, ok := worstExit[to]
				if !ok {
					exitOrder = append(exitOrder, to)
				}
				if !ok || old.less(w) {
					worstExit[to] = w
				}
			}
		}
	}
	for _, t := range exitOrder {
		exits = append(exits, wedge{to: t, w: worstExit[t]})
	}
	return iter, exits, nil
}
