package compiler

import (
	"bytes"
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/nicsdk"
)

// Defence in depth against a model file that smuggles C into the firmware: names from the
// file reach the C only inside comments (codegen.CommentSafe), and these checks hold even if
// that failed. emit proves each source equal, outside its comments, to the one rendered with
// neutral names (sameCode); build refuses sources whose preprocessor directives are not the
// ones nicc wrote (checkDirectives) and objects or an ELF that define a symbol nicc did not
// (symbolCheck).

// sameCode fails unless src, the file rendered with the model file's names, equals neutral,
// the file rendered with neutral names, outside their comments.
func sameCode(file string, src, neutral []byte) error {
	a, err := codegen.CodeOnly(src)
	if err != nil {
		return fmt.Errorf("internal error: generated %s: %v", file, err)
	}
	b, err := codegen.CodeOnly(neutral)
	if err != nil {
		return fmt.Errorf("internal error: generated %s: %v", file, err)
	}
	if !bytes.Equal(a, b) {
		line := 1
		for i := 0; i < min(len(a), len(b)) && a[i] == b[i]; i++ {
			if a[i] == '\n' {
				line++
			}
		}
		return &budget.CheckError{Err: fmt.Errorf("generated %s: the model file's names change its C outside the comments (line %d of the comment-free text); nicc refuses to build it (an internal error; please report it)", file, line)}
	}
	return nil
}

// checkDirectives refuses a source in dir whose preprocessor directives differ from those of
// what nicc wrote (expect, by path in dir).
func checkDirectives(dir string, expect map[string][]byte) error {
	for _, n := range slices.Sorted(maps.Keys(expect)) {
		path := filepath.Join(dir, n)
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		have, err := codegen.Directives(got)
		if err != nil {
			return &budget.CheckError{Err: fmt.Errorf("%s: %v", path, err)}
		}
		want, err := codegen.Directives(expect[n])
		if err != nil {
			return fmt.Errorf("internal error: generated %s: %v", n, err)
		}
		for i, d := range have {
			if i >= len(want) || d != want[i] {
				return &budget.CheckError{Err: fmt.Errorf("%s:%d: preprocessor directive %q is not one nicc wrote; refusing to build it", path, lineOf(got, d), clip(d))}
			}
		}
		if len(have) < len(want) {
			return &budget.CheckError{Err: fmt.Errorf("%s: directive %q that nicc wrote is missing; refusing to build it", path, want[len(have)])}
		}
	}
	return nil
}

// symbolCheck is what an object or ELF's symbols are checked against: the entry points it
// must define, the other globals nicc's sources define (a library of nicc's own), and the
// identifiers of the code nicc wrote (identifiers).
type symbolCheck struct {
	entries []string
	others  []string
	idents  map[string]bool
}

// niccSymbols is the symbol check of the nicc target's objects and ELF: its globals are
// exactly its entry points, nicc_policy and (for RL-CC) nicc_on_event.
func niccSymbols(h artifact.Handler, idents map[string]bool) symbolCheck {
	sc := symbolCheck{entries: []string{artifact.EntryPolicy}, idents: idents}
	if h == artifact.HandlerRLCC {
		sc.entries = append(sc.entries, artifact.EntryHandler)
	}
	return sc
}

// docaSymbols is the symbol check of the DOCA target's ELF: DOCA's entry points, and besides
// them only nicc_policy and the stand-in library's globals.
func docaSymbols(idents map[string]bool) symbolCheck {
	return symbolCheck{entries: nicsdk.DOCAEntries, others: append([]string{artifact.EntryPolicy}, nicsdk.DOCAShimGlobals...), idents: idents}
}

// symbols refuses an object or ELF at path that defines a symbol nicc's sources do not:
// its global symbols must be the entry points, all of them, and sc's others (for an ELF, plus
// the linker script's and whatever libgcc routine objs, the objects it was linked from,
// call), no symbol may be weak, and each local function or object must be named (up to gcc's
// ".suffix") by an identifier of the sources' code.
func (sc symbolCheck) symbols(path string, objs ...string) error {
	syms, err := elfSymbols(path)
	if err != nil {
		return err
	}
	globals := map[string]bool{}
	for _, e := range sc.entries {
		globals[e] = true
	}
	allowed := maps.Clone(globals)
	for _, o := range sc.others {
		allowed[o] = true
	}
	if len(objs) > 0 {
		for _, s := range nicsdk.LinkerSymbols {
			allowed[s] = true
		}
	}
	for _, obj := range objs {
		objSyms, err := elfSymbols(obj)
		if err != nil {
			return err
		}
		for _, s := range objSyms {
			if s.Section == elf.SHN_UNDEF {
				allowed[s.Name] = true
			}
		}
	}
	refuse := func(s elf.Symbol, why string) error {
		return &budget.CheckError{Err: fmt.Errorf("%s: symbol %s %s; the sources differ from what nicc generated, refusing them", path, clip(s.Name), why)}
	}
	for _, s := range syms {
		typ, bind := elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info)
		switch {
		case typ == elf.STT_SECTION || typ == elf.STT_FILE:
		case bind == elf.STB_WEAK:
			return refuse(s, "is weak (nicc emits no weak symbol)")
		case s.Section == elf.SHN_UNDEF:
		case bind == elf.STB_GLOBAL:
			if !allowed[s.Name] {
				why := "is global, and nicc's only global symbols are its entry points"
				if len(sc.others) > 0 {
					why += " and its own library's"
				}
				return refuse(s, why)
			}
			delete(globals, s.Name)
		case typ == elf.STT_FUNC || typ == elf.STT_OBJECT:
			base, _, _ := strings.Cut(s.Name, ".")
			if !strings.HasPrefix(s.Name, ".") && !sc.idents[base] {
				return refuse(s, "is defined, and no code nicc wrote names it")
			}
		}
	}
	for g := range globals {
		return &budget.CheckError{Err: fmt.Errorf("%s: entry point %s is not defined", path, g)}
	}
	return nil
}

// identifiers are the identifiers of the code (not the comments) of every source nicc wrote
// (expect).
func identifiers(expect map[string][]byte) (map[string]bool, error) {
	all := map[string]bool{}
	for n, b := range expect {
		ids, err := codegen.Identifiers(b)
		if err != nil {
			return nil, fmt.Errorf("internal error: generated %s: %v", n, err)
		}
		for id := range ids {
			all[id] = true
		}
	}
	return all, nil
}

// lineOf is the line of src where directive d (as codegen.Directives gives it) starts, or 0
// where a splice or comment hides it from a line-by-line search.
func lineOf(src []byte, d string) int {
	for i, l := range strings.Split(string(src), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") && "#"+strings.Join(strings.Fields(t[1:]), " ") == d {
			return i + 1
		}
	}
	return 0
}

func elfSymbols(path string) ([]elf.Symbol, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return syms, nil
}

// clip is s for a one-line message: at most 80 bytes, quoted by the caller.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
