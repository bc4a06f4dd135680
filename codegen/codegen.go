// Package codegen prints nicc's integer IR as freestanding C99, and does nothing else: it never
// evaluates a model (the golden models are quantize's TreeIR.Eval, MLPIR.Eval and
// LSTMIR.Step).
//
// The output is one .c file and one .h file. The code nicc ships (Trees, MLP, LSTM) uses no
// floating point, no libm, no heap, no loops and no recursion; trees are nested if/else over
// the raw int32 features (or tables, see Form), leaves add into an accumulator of the width the
// IR proved (int32_t or int64_t), and the result is rounded once at the end exactly as
// quantize.TreeIR.Round does. The same IR and options give byte-identical files. (The
// soft-float baseline, float C that the integer paths are benchmarked against, is
// internal/softfloat: a reference, never shipped firmware.)
package codegen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nicc-dev/nicc/quantize"
)

// DefaultFunc is the entry point's name when Options.Func is empty.
const DefaultFunc = "nicc_policy"

// Form is how a tree is printed.
type Form int

const (
	// FormBranch prints every tree as nested if/else.
	FormBranch Form = iota
	// FormTable prints oblivious trees in constant time: the comparison bits form an index
	// into a static const leaf table. Other trees stay nested if/else.
	FormTable
	// FormWalk prints oblivious trees as FormTable does and every other tree as a node table
	// walked by straight-line code, one step per level (walk.go): the code is small and the
	// tables are data, so gcc compiles a large ensemble in seconds, at more cycles per level
	// than nested if/else.
	FormWalk
	// FormRank prints Options.Rank (a quantize.RankLayout): each feature's rank from a
	// bucket table, then one table load per group of trees (rank.go). No branch, no loop.
	FormRank
	formEnd
)

var formNames = [...]string{FormBranch: "branch", FormTable: "table", FormWalk: "walk", FormRank: "rank"}

// ParseForm is the form a name (Form.String) stands for.
func ParseForm(s string) (Form, error) {
	for f, n := range formNames {
		if n == s {
			return Form(f), nil
		}
	}
	return 0, fmt.Errorf("unknown form %q (want one of %s)", s, strings.Join(formNames[:], ", "))
}

func (f Form) String() string {
	if f >= 0 && f < formEnd && formNames[f] != "" {
		return formNames[f]
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

// Options control Trees, MLP and LSTM.
type Options struct {
	// Func is the entry point: int32_t Func(const int32_t *x). Empty means DefaultFunc. It must
	// be a C identifier; it also names the files (Func.c, Func.h) and prefixes the macros.
	Func string
	Form Form
	// Inline also defines the model as static inline Func_inline, always inlined by gcc, for a
	// caller that includes the .c (the RL-CC handler); Func calls it.
	Inline bool
	// Rank is FormRank's layout, built from the same IR (quantize.TreeIR.BuildRank).
	Rank *quantize.RankLayout
	// Products is, for an LSTM in FormTable, how each gate input adds its partial products
	// (Products); nil means AllRows.
	Products Products
}

// Files is generated C: a header and a source file that includes it by HeaderName.
type Files struct {
	HeaderName, SourceName string
	Header, Source         []byte
}

// Trees prints a tree-ensemble IR as C: the header holds the model hash, the input and
// output formats and the rounding rule in its comment, NUM_INPUTS, OUT_FRAC and per-input
// FRAC/MIN/MAX macros, and the prototype int32_t Func(const int32_t *x), where x points at one
// raw int32 per input. The source includes the header by HeaderName.
func Trees(ir *quantize.TreeIR, opt Options) (*Files, error) {
	fn, err := entryName(opt)
	if err != nil {
		return nil, err
	}
	if opt.Form < 0 || opt.Form >= formEnd {
		return nil, fmt.Errorf("codegen: unknown form %d", int(opt.Form))
	}
	if err := check(ir); err != nil {
		return nil, err
	}
	if opt.Form == FormWalk {
		for t := range ir.Trees {
			if tr := &ir.Trees[t]; !tr.Oblivious {
				if err := checkWalk(t, tr, len(ir.Inputs)); err != nil {
					return nil, err
				}
			}
		}
	}
	if (opt.Form == FormRank) != (opt.Rank != nil) {
		return nil, fmt.Errorf("codegen: the rank form needs a rank layout, and only it takes one")
	}
	g := &gen{ir: ir, opt: opt, fn: fn, macro: upper(fn), header: fn + ".h", accT: "int64_t"}
	bits := ir.AccBits
	if opt.Rank != nil {
		bits = opt.Rank.AccBits // proven over the groups' partial sums, not the trees'
	}
	if bits == 32 {
		g.accT = "int32_t"
	}
	return &Files{
		HeaderName: g.header, SourceName: fn + ".c",
		Header: print(g.lowerHeader()), Source: print(g.lowerSource()),
	}, nil
}

// identRE matches the C identifiers nicc accepts as entry points (no leading underscore,
// which C reserves in part).
var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// check refuses an IR the printer cannot print faithfully: codegen trusts the IR's proofs but
// not its shape.
func check(ir *quantize.TreeIR) error {
	if ir == nil {
		return fmt.Errorf("codegen: nil IR")
	}
	if ir.AccBits != 32 && ir.AccBits != 64 {
		return fmt.Errorf("codegen: accumulator width %d (want 32 or 64)", ir.AccBits)
	}
	if k := ir.AccFrac - ir.OutFrac; k < 0 || k > 62 {
		return fmt.Errorf("codegen: rounding shift %d is outside 0..62", k)
	}
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		if len(tr.Nodes) == 0 {
			return fmt.Errorf("codegen: tree %d has no nodes", t)
		}
		for i, nd := range tr.Nodes {
			if nd.Kind != quantize.KindSplit {
				continue
			}
			if nd.Feature < 0 || nd.Feature >= len(ir.Inputs) || nd.Left <= i || nd.Right <= i || nd.Left >= len(tr.Nodes) || nd.Right >= len(tr.Nodes) {
				return fmt.Errorf("codegen: tree %d node %d is malformed", t, i)
			}
		}
		if tr.Oblivious && (len(tr.Levels) != tr.Depth || len(tr.Table) != 1<<tr.Depth) {
			return fmt.Errorf("codegen: oblivious tree %d has %d levels and %d table entries for depth %d", t, len(tr.Levels), len(tr.Table), tr.Depth)
		}
	}
	return nil
}

// Write writes the header and the source into dir.
func (f *Files) Write(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, f.HeaderName), f.Header, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, f.SourceName), f.Source, 0o644)
}
