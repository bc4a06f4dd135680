package codegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/quantize"
)

// Product is how the LSTM's gate layer adds one input's partial products: the input's value
// times its packed gate words, mod 2^64 (quantize.LaneLayer.Pack). Whichever it is, the
// accumulators hold the same integers.
type Product byte

const (
	// ProductMul multiplies: a load, a multiply and an add a packed word.
	ProductMul Product = '.'
	// ProductRows reads the row of the input's value from a table with a row for every value
	// it may take (h: every byte; x_t: its proven range): a load and an add a word.
	ProductRows Product = 'r'
	// ProductBias is ProductRows whose rows add the gate biases too, a word for every group:
	// its row starts the accumulators, so the biases cost no load and the input no add. At
	// most one input has it; it is added first.
	ProductBias Product = 'b'
	// ProductSign reads the row of |v − m| from a table of rows 0..max|v − m| and adds it, or
	// subtracts it when v < m (one branch an input): about half ProductRows' bytes, since
	// (−d)·w = −(d·w) mod 2^64. m (SignCenter) is 0 for a unit of h, whose rows are then
	// 0..128, and the middle of x_t's proven range, whose m·w the biases take.
	ProductSign Product = 's'
)

// Products is a Product per gate input, x_t's dense units then h's units: how an LSTM's
// table form adds each one's partial products. Its string is those bytes, e.g. "b........sssr"
// for a dense layer of 9 units and 4 of h.
type Products []Product

func (ps Products) String() string { return string(ps) }

// ParseProducts is the Products a string (Products.String) stands for.
func ParseProducts(s string) (Products, error) {
	ps := Products(s)
	for _, p := range ps {
		switch p {
		case ProductMul, ProductRows, ProductBias, ProductSign:
		default:
			return nil, fmt.Errorf("codegen: %q is not a product plan (one of %q a gate input)", s, "."+"r"+"b"+"s")
		}
	}
	return ps, nil
}

// AllRows is the table form's default plan: every unit of h read from a table of all 256
// rows, x_t multiplied.
func AllRows(ir *quantize.LSTMIR) Products {
	ps := make(Products, ir.Gates.In)
	for i := range ps {
		ps[i] = ProductMul
		if i >= ir.Pre.Out && LiveWords(ir, i) > 0 {
			ps[i] = ProductRows
		}
	}
	return ps
}

// LiveWords is how many of the gate layer's packed words input i has a nonzero weight in:
// its multiplies, or the words of its table's rows.
func LiveWords(ir *quantize.LSTMIR, i int) int { return len(liveGroups(&ir.Gates, i)) }

// ProductRange is the values input i's table has rows for in form p (lo, hi: hi − lo + 1
// rows; ProductSign's of |v − SignCenter|), ok false when p is no table for it: ProductMul, or
// an input no weight reads.
func ProductRange(ir *quantize.LSTMIR, i int, p Product) (lo, hi int64, ok bool) {
	if p == ProductMul || LiveWords(ir, i) == 0 {
		return 0, 0, false
	}
	vLo, vHi := int64(-128), int64(127)
	if i < ir.Pre.Out {
		a := ir.Pre.Act(i)
		vLo, vHi = a.Lo, a.Hi
	}
	if p == ProductSign {
		m := SignCenter(ir, i)
		return 0, max(m-vLo, vHi-m), true
	}
	return vLo, vHi, true
}

// SignCenter is the value m a sign table's input is taken from, v − m: 0 for a unit of h,
// the middle of x_t's proven range.
func SignCenter(ir *quantize.LSTMIR, i int) int64 {
	if i >= ir.Pre.Out {
		return 0
	}
	a := ir.Pre.Act(i)
	return (a.Lo + a.Hi + 1) / 2
}

// biasWords are the packed biases as the C adds them: with m·w of each sign table's input
// (SignCenter), mod 2^64.
func (g *lstmGen) biasWords(ps Products) []uint64 {
	words := g.ir.Gates.Pack()
	groups := g.ir.Gates.Groups()
	b := slices.Clone(words[:groups])
	for i, p := range ps {
		if p != ProductSign {
			continue
		}
		m := uint64(SignCenter(g.ir, i))
		for gi := range b {
			b[gi] += m * words[groups*(1+i)+gi]
		}
	}
	return b
}

// ProductBytes is the bytes of input i's table in form p: its rows of LiveWords words, or
// of a word for every group with the biases (ProductBias); 0 for none.
func ProductBytes(ir *quantize.LSTMIR, i int, p Product) int {
	lo, hi, ok := ProductRange(ir, i, p)
	if !ok {
		return 0
	}
	w := LiveWords(ir, i)
	if p == ProductBias {
		w = ir.Gates.Groups()
	}
	return int(hi-lo+1) * 8 * w
}

// checkProducts accepts a plan of one product a gate input, tables only where ProductRange
// has rows, and at most one ProductBias.
func checkProducts(ir *quantize.LSTMIR, ps Products) error {
	if len(ps) != ir.Gates.In {
		return fmt.Errorf("codegen: a product plan of %d inputs for %d gate inputs", len(ps), ir.Gates.In)
	}
	if _, err := ParseProducts(string(ps)); err != nil {
		return err
	}
	if strings.Count(string(ps), string(ProductBias)) > 1 {
		return fmt.Errorf("codegen: product plan %s holds the biases in more than one table", ps)
	}
	for i, p := range ps {
		if _, _, ok := ProductRange(ir, i, p); p != ProductMul && !ok {
			return fmt.Errorf("codegen: product plan %s: gate input %d cannot be read from a %q table", ps, i, p)
		}
	}
	return nil
}

// products is the plan the C follows: Options.Products, or in FormTable without one AllRows;
// FormBranch multiplies every word.
func (g *lstmGen) products() Products {
	switch {
	case g.opt.Form != FormTable:
		return Products(strings.Repeat(string(ProductMul), g.ir.Gates.In))
	case g.opt.Products != nil:
		return g.opt.Products
	}
	return AllRows(g.ir)
}

// bias is the input whose table holds the biases, or −1.
func (ps Products) bias() int { return strings.IndexByte(string(ps), byte(ProductBias)) }

// inputName names gate input i: x_t's dense unit j or h's unit k.
func inputName(ir *quantize.LSTMIR, i int) string {
	if i < ir.Pre.Out {
		return fmt.Sprintf("x%d", i)
	}
	return fmt.Sprintf("h%d", i-ir.Pre.Out)
}

// tableNote says which inputs add a row of a table of their partial products instead.
func (g *lstmGen) tableNote() []string {
	items := DescribeProducts(g.ir, g.products())
	if items == nil {
		return nil
	}
	return append([]string{"These inputs add the row at their value of a table of their partial products instead (the",
		"value times their words, mod 2^64: a load and an add a word):"}, wrapList("  ", items)...)
}

// DescribeProducts lists the inputs ps reads from tables, with their rows, runs of
// consecutive inputs read alike in one item ("h0..h9 (rows 0..128 of |h|, subtracted when h
// < 0)").
func DescribeProducts(ir *quantize.LSTMIR, ps Products) []string {
	type run struct {
		first, last int
		what        string
	}
	var runs []run
	for i, p := range ps {
		lo, hi, ok := ProductRange(ir, i, p)
		if !ok {
			continue
		}
		what := fmt.Sprintf("rows %d..%d", lo, hi)
		switch p {
		case ProductBias:
			what += ", with the biases, added first"
		case ProductSign:
			what = fmt.Sprintf("rows %d..%d of |h|, subtracted when h < 0", lo, hi)
			if m := SignCenter(ir, i); i < ir.Pre.Out {
				what = fmt.Sprintf("rows %d..%d of |x - %d|, subtracted when x < %d", lo, hi, m, m)
			}
		}
		if n := len(runs); n > 0 && runs[n-1].what == what && runs[n-1].last == i-1 && (i < ir.Pre.Out) == (runs[n-1].first < ir.Pre.Out) {
			runs[n-1].last = i
			continue
		}
		runs = append(runs, run{i, i, what})
	}
	var items []string
	for _, r := range runs {
		name := inputName(ir, r.first)
		if r.last > r.first {
			name += ".." + inputName(ir, r.last)
		}
		items = append(items, fmt.Sprintf("%s (%s)", name, r.what))
	}
	return items
}

// wrapList joins items with commas into lines of at most about 90 characters.
func wrapList(indent string, items []string) []string {
	var l []string
	cur := indent
	for k, it := range items {
		if k < len(items)-1 {
			it += ","
		}
		if len(cur)+len(it) > 90 && cur != indent {
			l = append(l, cur)
			cur = indent
		}
		if cur != indent {
			cur += " "
		}
		cur += it
	}
	return append(l, cur)
}

// liveGroups are the packed words of l that input i has a nonzero weight in.
func liveGroups(l *quantize.LaneLayer, i int) []int {
	var gs []int
	for gi := range l.Groups() {
		for lane := range l.Lanes() {
			if j := gi*l.Lanes() + lane; j < l.Out && l.W[j][i] != 0 {
				gs = append(gs, gi)
				break
			}
		}
	}
	return gs
}

// tableGroups are the packed words of input i's table rows: its live ones, or every group
// when its rows hold the biases.
func (g *lstmGen) tableGroups(ps Products, i int) []int {
	if ps[i] == ProductBias {
		gs := make([]int, g.ir.Gates.Groups())
		for k := range gs {
			gs[k] = k
		}
		return gs
	}
	return liveGroups(&g.ir.Gates, i)
}

// productTables are the partial products of the inputs ps reads from tables: row v − lo of
// table xj or hk (lo its first row, ProductRange) is v times the input's packed gate words
// (tableGroups), mod 2^64, plus the packed biases for ProductBias. Adding a row's words
// advances the accumulators exactly as the multiplies would (arithmetic mod 2^64). The rows
// are constant expressions gcc folds (unsigned arithmetic wraps by definition), written once
// per table as a macro of v rather than as rows of literals.
func (g *lstmGen) productTables(ps Products) []*node {
	ir, m := g.ir, g.macro
	words := ir.Gates.Pack()
	groups := ir.Gates.Groups()
	bias := g.biasWords(ps)
	ns := []*node{
		&node{Kind: kindComment, Lines: []string{
			"the gate inputs' partial products: row v - lo of table xj or hk is v times the input's",
			"packed gate weight words, mod 2^64 (plus the packed biases in the table that holds them),",
			"for each value v from lo (of a sign table, v = |x - m| from 0); R(v) is one row"}},
		line(fmt.Sprintf("#define %s_ROW4(R, v) R(v), R((v) + 1), R((v) + 2), R((v) + 3)", m)),
		line(fmt.Sprintf("#define %s_ROW16(R, v) %s_ROW4(R, v), %s_ROW4(R, (v) + 4), %s_ROW4(R, (v) + 8), %s_ROW4(R, (v) + 12)", m, m, m, m, m)),
	}
	for i, p := range ps {
		lo, hi, ok := ProductRange(ir, i, p)
		if !ok {
			continue
		}
		name := inputName(g.ir, i)
		gs := g.tableGroups(ps, i)
		row := make([]string, len(gs))
		for c, gi := range gs {
			row[c] = fmt.Sprintf("(uint64_t)(int64_t)(v) * UINT64_C(0x%016x)", words[groups*(1+i)+gi])
			if p == ProductBias {
				row[c] += fmt.Sprintf(" + UINT64_C(0x%016x)", bias[gi])
			}
		}
		upper := strings.ToUpper(name)
		var rows []string
		for v := lo; v <= hi; {
			if v+15 <= hi {
				rows = append(rows, fmt.Sprintf("%s_ROW16(%s_%s, %d)", m, m, upper, v))
				v += 16
			} else {
				rows = append(rows, fmt.Sprintf("%s_%s(%d)", m, upper, v))
				v++
			}
		}
		ns = append(ns,
			line(fmt.Sprintf("#define %s_%s(v) %s", m, upper, strings.Join(row, ", "))),
			line(fmt.Sprintf("static const uint64_t %s_%s[%d] = {%s};", g.fn, name, int(hi-lo+1)*len(row), strings.Join(rows, ", "))),
		)
	}
	return append(ns, line(""))
}

// gateSums are the packed sums of the gate layer over inputs, each input's products added as
// ps says (see lanes for the rest): the input holding the biases first, then the others in
// order. gw is the table of the multiplied words (gateWords).
func (g *lstmGen) gateSums(inputs []string, pre [][]*node, ps Products) []*node {
	l := &g.ir.Gates
	groups := l.Groups()
	order := make([]int, 0, l.In)
	fold := ps.bias()
	if fold >= 0 {
		order = append(order, fold)
	}
	for i := range l.In {
		if i != fold {
			order = append(order, i)
		}
	}
	var body []*node
	if fold < 0 {
		for gi := range groups {
			body = append(body, stmt("uint64_t a%d = gw[%d];", gi, gi))
		}
	}
	_, off := g.gateWords(ps)
	for _, i := range order {
		gs := liveGroups(l, i)
		if len(gs) == 0 {
			continue
		}
		body = append(body, pre[i]...)
		tab := fmt.Sprintf("%s_%s", g.fn, inputName(g.ir, i))
		n := len(g.tableGroups(ps, i))
		switch lo, _, _ := ProductRange(g.ir, i, ps[i]); ps[i] {
		case ProductMul:
			for _, gi := range gs {
				body = append(body, stmt("a%d += %s * gw[%d];", gi, inputs[i], off[i]+gi), stmt("%s(a%d);", g.keep(), gi))
			}
		case ProductBias:
			body = append(body, rowPointer(i, tab, inputs[i], lo, n))
			for gi := range groups {
				body = append(body, stmt("uint64_t a%d = R%d[%d];", gi, i, gi), stmt("%s(a%d);", g.keep(), gi))
			}
		case ProductRows:
			body = append(body, rowPointer(i, tab, inputs[i], lo, n))
			for k, gi := range gs {
				body = append(body, stmt("a%d += R%d[%d];", gi, i, k), stmt("%s(a%d);", g.keep(), gi))
			}
		case ProductSign:
			branch := func(op string) []*node {
				ns := []*node{stmt("const uint64_t *R%d = %s %s %s * %d;", i, tab, op, inputs[i], n), stmt("%s(R%d);", g.keep(), i)}
				for k, gi := range gs {
					ns = append(ns, stmt("a%d %s= R%d[%d];", gi, op, i, k), stmt("%s(a%d);", g.keep(), gi))
				}
				return ns
			}
			body = append(body, &node{Kind: kindIf, Text: inputs[i] + " < 0", Body: branch("-"), Else: branch("+")})
		}
	}
	return body
}

// gateWords are the gate layer's words the C multiplies, the gw table: the packed biases
// (unless a table holds them), then every group's words of each input not read from a
// table, in order; off[i] is where input i's words start in it.
func (g *lstmGen) gateWords(ps Products) (words []string, off []int) {
	all := packed(&g.ir.Gates)
	groups := g.ir.Gates.Groups()
	if ps.bias() < 0 {
		for _, b := range g.biasWords(ps) {
			words = append(words, fmt.Sprintf("UINT64_C(0x%016x)", b))
		}
	}
	off = make([]int, len(ps))
	for i, p := range ps {
		if _, _, ok := ProductRange(g.ir, i, p); !ok {
			off[i] = len(words)
			words = append(words, all[groups*(1+i):groups*(2+i)]...)
		}
	}
	return words, off
}

// rowPointer declares Ri, the row of table tab (rows of n words from value lo) at value v.
func rowPointer(i int, tab, v string, lo int64, n int) *node {
	if lo <= 0 {
		return stmt("const uint64_t *R%d = &%s[%d] + %s * %d;", i, tab, -lo*int64(n), v, n)
	}
	return stmt("const uint64_t *R%d = %s + (%s - %d) * %d;", i, tab, v, lo, n)
}
