// Package codegen prints nicc's integer IR as freestanding C99, and does nothing else: it never
// evaluates a model (the golden model is quantize.TreeIR.Eval).
//
// The output is one .c file and one .h file. The generated code uses no floating point, no
// libm, no heap, no loops and no recursion; trees are nested if/else over the raw int32
// features, leaves add into an accumulator of the width the IR proved (int32_t or int64_t),
// and the result is rounded once at the end exactly as quantize.TreeIR.Round does. The same IR
// and options give byte-identical files.
package codegen

import (
	"errors"
	"os"
	"path/filepath"

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
	formEnd
)

// Options control Trees.
type Options struct {
	// Func is the entry point: int32_t Func(const int32_t *x). Empty means DefaultFunc. It must
	// be a C identifier; it also names the files (Func.c, Func.h) and prefixes the macros.
	Func string
	Form Form
}

// Files is generated C: a header and a source file that includes it by HeaderName.
type Files struct {
	HeaderName, SourceName string
	Header, Source         []byte
}

// Trees prints a tree-ensemble IR as C: the header holds the model hash, the input and
// output formats and the rounding rule in its comment, a few NUM_INPUTS/OUT_FRAC-style macros
// and the prototype int32_t Func(const int32_t *x), where x points at one raw int32 per input.
func Trees(ir *quantize.TreeIR, opt Options) (*Files, error) {
	return nil, errors.New("codegen: Trees: not implemented yet")
}

// Write writes the header and the source into dir.
func (f *Files) Write(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, f.HeaderName), f.Header, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, f.SourceName), f.Source, 0o644)
}
