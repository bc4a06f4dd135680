package compiler

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/termtext"
)

// An LSTM's table form reads some gate inputs' partial products from tables
// (codegen.Products): which ones is a knapsack. Each input is multiplied, or read from a
// table of all its rows, or of the rows of |v − m| with a branch on v's side of m (|h|, and
// |x_t − the middle of its range|: about half the bytes), or from a table whose rows hold
// the biases too; planProducts picks, within the bytes the
// budget leaves, the plan with the most cycles saved by the profile's costs, exactly (dynamic
// programming over bytes). The costs are estimates of the code gcc makes; the plan is then
// built and bounded like every other candidate, and the measured WCET decides.

// productOption is one way of adding an input's products: its bytes beyond the multiplied
// words it drops, and the cycles it saves over multiplying them.
type productOption struct {
	p      codegen.Product
	bytes  uint64
	saving int64
}

// productOptions are input i's ways other than multiplying, by the profile's costs: a
// multiplied word costs a load, a multiply and an add; a table row's word a load and an add,
// after 4 ALU operations that address the row (shift, table base in two, add); a sign table's
// unit one path through a taken branch and a jump besides (gcc lays one path out of line);
// the biases' table is the one whose words start the accumulators, where the bias words
// were loaded anyway, so its input costs the addressing alone.
func productOptions(ir *quantize.LSTMIR, i int, k fwsim.Costs) []productOption {
	w := int64(codegen.LiveWords(ir, i))
	if w == 0 {
		return nil
	}
	groups := uint64(ir.Gates.Groups())
	alu, mulWord := int64(k.ALU), int64(k.Load+k.Mul+k.ALU)
	address := 4 * alu
	var os []productOption
	for _, p := range []codegen.Product{codegen.ProductRows, codegen.ProductSign, codegen.ProductBias} {
		b := uint64(codegen.ProductBytes(ir, i, p))
		if b == 0 {
			continue
		}
		drop := 8 * groups // the input's words in the multiplied table
		save := w*int64(k.Mul) - address
		switch p {
		case codegen.ProductSign:
			save -= int64(k.BranchTaken + k.JAL)
		case codegen.ProductBias:
			drop += 8 * groups // and the biases
			save = w*mulWord - address
		}
		os = append(os, productOption{p: p, bytes: b - min(b, drop), saving: save})
	}
	return os
}

// planProducts is the plan that saves the most cycles (productOptions) within room bytes of
// tables beyond the multiplied words, or nil when no table fits.
func planProducts(ir *quantize.LSTMIR, room uint64, k fwsim.Costs) codegen.Products {
	var items []int
	var opts [][]productOption
	var total uint64
	for i := range ir.Gates.In {
		if os := productOptions(ir, i, k); os != nil {
			items, opts = append(items, i), append(opts, os)
			var most uint64
			for _, o := range os {
				most = max(most, o.bytes)
			}
			total += most
		}
	}
	// Bytes in units: their greatest common divisor, or coarser (each option rounded up, so
	// the plan stays within room) to keep the table at most maxCells wide.
	const maxCells = 1 << 16
	unit := uint64(0)
	for _, os := range opts {
		for _, o := range os {
			unit = gcd(unit, o.bytes)
		}
	}
	unit = max(unit, 1, (total+maxCells-1)/maxCells)
	cells := int(min(room, total)/unit) + 1
	cost := func(o productOption) int { return int((o.bytes + unit - 1) / unit) }

	// best[f][c]: the most saved within c units, f whether an input holds the biases;
	// choice[n][f][c] the option (−1: multiplied) the n-th item takes there.
	const none = int64(-1) << 62
	best := [2][]int64{make([]int64, cells), make([]int64, cells)}
	for c := range best[1] {
		best[1][c] = none
	}
	choice := make([][2][]int8, len(items))
	for n, os := range opts {
		next := [2][]int64{append([]int64(nil), best[0]...), append([]int64(nil), best[1]...)}
		choice[n] = [2][]int8{make([]int8, cells), make([]int8, cells)}
		for f := range 2 {
			for c := range cells {
				choice[n][f][c] = -1
				for o, opt := range os {
					from, need := f, cost(opt)
					if opt.p == codegen.ProductBias {
						if f == 0 {
							continue
						}
						from = 0
					}
					if need > c || best[from][c-need] == none {
						continue
					}
					if s := best[from][c-need] + opt.saving; s > next[f][c] {
						next[f][c], choice[n][f][c] = s, int8(o)
					}
				}
			}
		}
		best = next
	}
	f, c := 0, cells-1
	if best[1][c] > best[0][c] {
		f = 1
	}
	if best[f][c] <= 0 {
		return nil
	}
	ps := make(codegen.Products, ir.Gates.In)
	for i := range ps {
		ps[i] = codegen.ProductMul
	}
	for n := len(items) - 1; n >= 0; n-- {
		o := choice[n][f][c]
		if o < 0 {
			continue
		}
		opt := opts[n][o]
		ps[items[n]] = opt.p
		c -= cost(opt)
		if opt.p == codegen.ProductBias {
			f = 0
		}
	}
	return ps
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// productsDetail describes a table form's plan for the report.
func productsDetail(ir *quantize.LSTMIR, ps codegen.Products) string {
	bytes, rest := 0, ""
	for i, p := range ps {
		bytes += codegen.ProductBytes(ir, i, p)
		if p == codegen.ProductMul && codegen.LiveWords(ir, i) > 0 {
			rest = "; the rest multiplied"
		}
	}
	return fmt.Sprintf("partial products from tables (%s bytes): %s%s",
		termtext.Thousands(uint64(bytes)), strings.Join(codegen.DescribeProducts(ir, ps), ", "), rest)
}

// plannedTables is, for an LSTM once its table and branch forms are built (cs, costs), one
// more candidate: the table form as planProducts plans it within the room the branch form
// leaves in the .rodata budget, less shrink (bytes a build of an earlier plan overshot).
func (f *fitter) plannedTables(cs []candidate, costs []artifact.FormCandidate, limit artifact.MemoryBudget, p *fwsim.Profile, shrink uint64) (candidate, bool) {
	ir, ok := f.in.model.Policy.(*quantize.LSTMIR)
	if !ok || len(cs) < 2 || cs[0].form != codegen.FormTable || cs[0].products != nil || cs[1].form != codegen.FormBranch || !costs[1].Fits {
		return candidate{}, false
	}
	room := limit.RodataBytes - costs[1].RodataBytes
	if room <= shrink {
		return candidate{}, false
	}
	ps := planProducts(ir, room-shrink, p.Costs)
	if ps == nil {
		return candidate{}, false
	}
	for _, prev := range cs {
		if prev.products.String() == ps.String() {
			return candidate{}, false
		}
	}
	return candidate{form: codegen.FormTable, products: ps, detail: productsDetail(ir, ps)}, true
}
