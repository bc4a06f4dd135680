package codegen

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/quantize"
)

// FormWalk (see Form) prints each tree that is not oblivious as a node table and a walk of
// it unrolled once per level: no branch and no loop, so the worst case needs no loop bound,
// and gcc compiles the tables as data. A tree's nodes are numbered breadth first, so the
// two children of a split are adjacent:
//
//	p = &T[n];
//	n = p->c + (x[p->f] > p->t);
//
// steps from split n to its child c (x <= t) or c + 1. A leaf is its own child with t =
// INT32_MAX, which no x exceeds, so the walk stays on a leaf it reaches above the tree's
// depth. After depth steps n is a leaf, and acc += V[n] adds its value (V holds 0 for the
// splits). Oblivious trees are table lookups, as in FormTable.
//
// The trees are split into parts of about walkPartSteps steps, each a function that is
// never inlined, acc in and out (the same partial sums, in the same order, as the IR
// proves): the time gcc's UBSan instrumentation takes grows faster than the function it
// instruments (300 trees of depth 8 in one function: 33 s and 1 GB; in parts of 32 trees:
// 7 s and 0.35 GB), and a call costs a few cycles per part (+0.6% there).

// MaxWalkNodes is the most nodes a walked tree may have: its node indices are uint16_t.
const MaxWalkNodes = 1 << 16

// walkPartSteps is about how many walk steps (or lookup levels) one part holds.
const walkPartSteps = 256

// walked reports whether tr is printed as a walk.
func (g *gen) walked(tr *quantize.Tree) bool { return g.opt.Form == FormWalk && !tr.Oblivious }

// walkOrder numbers tr's nodes breadth first: order[k] is the IR node at walk index k, and
// index[i] the walk index of IR node i.
func walkOrder(tr *quantize.Tree) (order, index []int) {
	index = make([]int, len(tr.Nodes))
	order = []int{0}
	for k := 0; k < len(order); k++ {
		nd := &tr.Nodes[order[k]]
		if nd.Kind == quantize.KindSplit {
			index[nd.Left] = len(order)
			index[nd.Right] = len(order) + 1
			order = append(order, nd.Left, nd.Right)
		}
	}
	return order, index
}

// nodeType is the struct a walked tree's nodes have.
func (g *gen) nodeType() string { return "struct " + g.fn + "_node" }

// lowerWalk is the .c of FormWalk: the node struct, every tree's tables, the parts, and the
// entry calling them in order.
func (g *gen) lowerWalk() []*node {
	ir := g.ir
	noinline := g.macro + "_NOINLINE"
	ns := append(g.preamble(),
		line(""),
		&node{Kind: kindComment, Lines: []string{
			"A node of a walked tree: x[f] <= t goes to node c, x[f] > t to node c + 1. A leaf is",
			"its own child, with t = INT32_MAX, so a walk that reaches it stays on it.",
		}},
		line(g.nodeType()+" {"),
		line("\tint32_t t;"),
		line("\tuint16_t f;"),
		line("\tuint16_t c;"),
		line("};"),
	)
	var parts [][]int
	steps := walkPartSteps
	for t := range ir.Trees {
		if steps >= walkPartSteps {
			parts = append(parts, nil)
			steps = 0
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], t)
		steps += ir.Trees[t].Depth
	}
	if len(parts) > 1 {
		ns = append(ns, line(""),
			&node{Kind: kindComment, Lines: []string{"The parts are never inlined: gcc's time on one function grows faster than its size."}},
			line("#ifdef __GNUC__"),
			line("#define "+noinline+" __attribute__((noinline))"),
			line("#else"),
			line("#define "+noinline),
			line("#endif"))
	}
	var fns []*node
	body := g.accInit()
	for k, trees := range parts {
		var code []*node
		walks, steps := false, false
		for _, t := range trees {
			file, c := g.treeCode(t)
			ns = append(ns, file...)
			code = append(append(code, line("")), c...)
			if tr := &ir.Trees[t]; g.walked(tr) {
				walks, steps = true, steps || tr.Depth > 0
			}
		}
		decls := g.locals(trees)
		if walks {
			decls = append(decls, stmt("int32_t n;"))
		}
		if steps {
			decls = append(decls, stmt("const %s *p;", g.nodeType()))
		}
		if len(parts) == 1 {
			body = append(decls, append(body, code...)...)
			break
		}
		name := fmt.Sprintf("%s_part%d", g.fn, k)
		fns = append(fns, line(""),
			&node{Kind: kindComment, Lines: []string{fmt.Sprintf("trees %d to %d", trees[0], trees[len(trees)-1])}},
			&node{Kind: kindFunc, Text: fmt.Sprintf("static %s %s %s(const int32_t *x, %s acc)", noinline, g.accT, name, g.accT),
				Body: append(append(decls, code...), line(""), stmt("return acc;"))})
		body = append(body, stmt("acc = %s(x, acc);", name))
	}
	ns = append(ns, fns...)
	body = append(append(body, line("")), g.finish()...)
	return append(ns, entry(g.macro, g.fn, "const int32_t *x", "x", body, g.opt.Inline)...)
}

// walk is tree t's node and value tables (file scope) and its unrolled walk.
func (g *gen) walk(t int, tr *quantize.Tree) (tables, body []*node) {
	order, index := walkOrder(tr)
	nodes := make([]string, len(order))
	vals := make([]string, len(order))
	for k, i := range order {
		nd := &tr.Nodes[i]
		if nd.Kind == quantize.KindLeaf {
			nodes[k] = fmt.Sprintf("{INT32_MAX, 0, %d}", k)
			vals[k] = g.lit(nd.Value)
			continue
		}
		nodes[k] = fmt.Sprintf("{%s, %d, %d}", lit(int64(nd.T), 32), nd.Feature, index[nd.Left])
		vals[k] = "0"
	}
	nt := fmt.Sprintf("%s_nodes%d", g.fn, t)
	vt := fmt.Sprintf("%s_values%d", g.fn, t)
	tables = []*node{
		line(""), {Kind: kindTable, Name: nt, Type: g.nodeType(), Values: nodes},
		line(""), {Kind: kindTable, Name: vt, Type: g.accT, Values: vals},
	}
	body = []*node{
		{Kind: kindComment, Lines: []string{fmt.Sprintf("tree %d (source tree %d): depth %d, walked over %s", t, tr.Src, tr.Depth, nt)}},
		stmt("n = 0;"),
	}
	for range tr.Depth {
		body = append(body, stmt("p = &%s[n];", nt), stmt("n = p->c + (x[p->f] > p->t);"))
	}
	return tables, append(body, stmt("acc += %s[n];", vt))
}

// checkWalk refuses a tree the walk form cannot index.
func checkWalk(t int, tr *quantize.Tree, inputs int) error {
	if len(tr.Nodes) > MaxWalkNodes {
		return fmt.Errorf("codegen: tree %d has %d nodes; a walked tree has at most %d", t, len(tr.Nodes), MaxWalkNodes)
	}
	if inputs > math.MaxUint16+1 {
		return fmt.Errorf("codegen: %d inputs; a walked tree indexes at most %d", inputs, math.MaxUint16+1)
	}
	return nil
}
