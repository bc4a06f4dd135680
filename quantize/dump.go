package quantize

import (
	"fmt"
	"strings"
)

// Dump is the IR as text: the hash, formats and proven ranges, then every tree, one node a
// line, children indented under their split (left first).
func (ir *TreeIR) Dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "treeir %q sha256:%s\n", ir.Name, ir.ModelHash)
	for i, in := range ir.Inputs {
		fmt.Fprintf(&b, "input %d %s\n", i, in)
	}
	fmt.Fprintf(&b, "acc Q%d int%d [%d, %d] base %d\n", ir.AccFrac, ir.AccBits, ir.Acc.Lo, ir.Acc.Hi, ir.Base)
	fmt.Fprintf(&b, "out Q%d round half up [%d, %d]", ir.OutFrac, ir.Out.Lo, ir.Out.Hi)
	if ir.Clamp {
		fmt.Fprintf(&b, " clamp [%d, %d]", ir.ClampMin, ir.ClampMax)
	}
	fmt.Fprintf(&b, "\ntransform %s (not applied)\n", ir.Transform)
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		fmt.Fprintf(&b, "tree %d src %d depth %d", t, tr.Src, tr.Depth)
		if tr.Oblivious {
			b.WriteString(" oblivious")
		}
		b.WriteByte('\n')
		tr.dump(&b, 0, 1)
	}
	return b.String()
}

func (t *Tree) dump(b *strings.Builder, i, depth int) {
	nd := &t.Nodes[i]
	b.WriteString(strings.Repeat("  ", depth))
	if nd.Kind == KindLeaf {
		fmt.Fprintf(b, "[%d] leaf %d\n", i, nd.Value)
		return
	}
	fmt.Fprintf(b, "[%d] x%d <= %d\n", i, nd.Feature, nd.T)
	t.dump(b, nd.Left, depth+1)
	t.dump(b, nd.Right, depth+1)
}
