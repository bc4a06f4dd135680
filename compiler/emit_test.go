package compiler

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/model"
)

// injection closes the comment a name lands in, defines a weak nicc_policy that returns
// INT32_MAX on one magic input, renames the real policy for every caller that includes the
// header (the host driver), and reopens a comment. Before names were escaped, nicc compiled it
// into firmware whose nicc_policy was the weak one and reported it verified.
const injection = "a */\n#ifndef NICC_EVIL\n#define NICC_EVIL\nint nicc_policy_real(const int *x);\n" +
	"__attribute__((weak)) int nicc_policy(const int *x) { return x[0] == 12345 ? 2147483647 : nicc_policy_real(x); }\n" +
	"#define nicc_policy nicc_policy_real\n#endif\n/*"

// hostileXGBoost is the shipped XGBoost ensemble with its first feature name replaced by
// name, written to a temporary file.
func hostileXGBoost(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(rlccXGB)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["learner"].(map[string]any)["feature_names"].([]any)[0] = name
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkOnlyNiccsC fails unless the C in dir has only the directives, and firmware.elf only
// the global symbols, a compile of a benignly named model has.
func checkOnlyNiccsC(t *testing.T, dir, benign string) {
	t.Helper()
	for _, f := range []string{"nicc_policy.c", "nicc_policy.h", "host/driver.c"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(benign, f))
		if err != nil {
			t.Fatal(err)
		}
		gd, err := codegen.Directives(got)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wd, _ := codegen.Directives(want)
		if strings.Join(gd, "\n") != strings.Join(wd, "\n") {
			t.Errorf("%s has directives %q, a benign compile %q", f, gd, wd)
		}
	}
	ef, err := elf.Open(filepath.Join(dir, artifact.FirmwareFile))
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, _ := ef.Symbols()
	var funcs []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			funcs = append(funcs, s.Name+":"+elf.ST_BIND(s.Info).String())
		}
	}
	if got := strings.Join(funcs, " "); got != "nicc_policy:STB_GLOBAL" {
		t.Errorf("firmware functions %s, want nicc_policy:STB_GLOBAL alone", got)
	}
}

// A model whose names carry C compiles into the firmware its trees define: the names reach
// the C only as escaped comment text. The form is the one compile chooses for it (rank), given
// so that no other candidate is built.
func TestCompileHostileNames(t *testing.T) {
	t.Parallel()
	benign := t.TempDir()
	if _, err := Compile(CompileOptions{Model: hostileXGBoost(t, "a_prev"), Out: benign, Handler: artifact.HandlerNone, Form: "rank", Vectors: 1000}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{injection, "x */ y\nz", "trigraph *??/", "splice \\"} {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r, err := Compile(CompileOptions{Model: hostileXGBoost(t, name), Out: dir, Handler: artifact.HandlerNone, Form: "rank", Vectors: 1000})
			if err != nil {
				t.Fatalf("name %q: %v", name, err)
			}
			if r.Verify.Mismatches != 0 {
				t.Fatalf("name %q: %d mismatches", name, r.Verify.Mismatches)
			}
			checkOnlyNiccsC(t, dir, benign)
			h, _ := os.ReadFile(filepath.Join(dir, "nicc_policy.h"))
			if !strings.Contains(string(h), `x[0] a *\x2f\x0a#ifndef`) && name == injection {
				t.Errorf("the header does not show the escaped name:\n%s", h)
			}
		})
	}
}

// Sources changed on disk after emit are refused before they are built: a directive nicc did
// not write, a weak or extra global symbol, a static function no code of nicc's names. The
// emit and build stages run alone, on the golden model and plan of one compile's first stages.
func TestCompileRefusesForeignC(t *testing.T) {
	t.Parallel()
	c := stagesTo(t, CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, Form: "branch"}, "fit")
	entry := regexp.MustCompile(`(?m)^int32_t nicc_policy\(const int32_t \*x\)\n`)
	for _, tc := range []struct {
		what, add, want string
	}{
		{"a directive", "#define NICC_SNEAKY 1\n", `nicc_policy.c:31: preprocessor directive "#define NICC_SNEAKY 1" is not one nicc wrote`},
		{"a weak symbol", "__attribute__((weak)) int32_t nicc_policy_w(const int32_t *x) { return x[1]; }\n", "symbol nicc_policy_w is weak"},
		{"an extra global", "int32_t nicc_backdoor(const int32_t *x) { return x[1]; }\n", "symbol nicc_backdoor is global"},
		{"a hidden static", "static __attribute__((noinline, used)) int32_t hidden(const int32_t *x) { return x[1]; }\n", "symbol hidden is defined, and no code nicc wrote names it"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			t.Parallel()
			in := c.emitInput()
			in.dir = t.TempDir()
			in.tamper = tamperFirst(t, "nicc_policy.c", entry, func(m []string) string { return tc.add + m[0] })
			e, err := emitStage(in)
			if err != nil {
				t.Fatal(err)
			}
			b := c.buildInput()
			b.dir, b.emitted = in.dir, e
			_, err = buildStage(b)
			var ce *budget.CheckError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want a budget.CheckError with %q", tc.what, err, tc.want)
			}
		})
	}
}

// compile never writes through a symbolic link: not into a linked output directory, and not
// through a link planted in an earlier compile's directory, which the new compile replaces
// whole (its links gone, their targets untouched).
func TestCompileRefusesSymlinks(t *testing.T) {
	t.Parallel()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Handler: artifact.HandlerNone, Form: "walk", Vectors: 1000}); err != nil {
		t.Fatal(err)
	}
	planted := []string{"nicc_policy.c", artifact.FirmwareFile, "host/driver.c", "host/driver", "nicsdk.h"}
	for _, p := range planted {
		os.Remove(filepath.Join(dir, p))
		if err := os.Symlink(victim, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Handler: artifact.HandlerNone, Form: "walk", Vectors: 1000}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatal("the links' target was overwritten")
	}
	for _, p := range planted {
		if fi, err := os.Lstat(filepath.Join(dir, p)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("planted %s: after the compile %v, %v; want the file compile wrote", p, fi, err)
		}
	}
	real := t.TempDir()
	dir = t.TempDir()
	if err := os.Symlink(real, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	_, err := Compile(CompileOptions{Model: rlccXGB, Out: filepath.Join(dir, "out"), Handler: artifact.HandlerNone, Form: "walk", Vectors: 1000})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "out")+" is a symbolic link") {
		t.Errorf("linked out: %v", err)
	}
	if ents, _ := os.ReadDir(real); len(ents) != 0 {
		t.Errorf("compile wrote %d entries into a linked directory", len(ents))
	}
}

// FuzzCompileNames feeds arbitrary model and input names through the whole compile: it either
// refuses the model with a plain error or builds firmware whose sources hold exactly the
// directives, and whose ELF exactly the functions, of a compile with benign names.
func FuzzCompileNames(f *testing.F) {
	f.Add("t", "x0", "x1")
	f.Add(injection, "*/", "??/")
	f.Add("a\\", "\n#include <stdio.h>\n", "é\x00")
	benign := f.TempDir()
	if _, err := Compile(CompileOptions{Model: saveModelF(f, treeModel([]string{"x0", "x1"}, stump(0, 0.5), stump(1, -2))), Out: benign, Handler: artifact.HandlerNone, Vectors: 200}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, in0, in1 string) {
		m := treeModel([]string{in0, in1}, stump(0, 0.5), stump(1, -2))
		m.Name = name
		dir := t.TempDir()
		_, err := Compile(CompileOptions{Model: saveModelF(t, m), Out: dir, Handler: artifact.HandlerNone, Vectors: 200})
		var ce *budget.CheckError
		switch {
		case errors.As(err, &ce):
			t.Fatalf("names %q %q %q: %v", name, in0, in1, err)
		case err != nil:
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("names %q %q %q: a refusal of more than one line: %v", name, in0, in1, err)
			}
			return
		}
		checkOnlyNiccsC(t, dir, benign)
	})
}

func saveModelF(t testing.TB, m *model.Model) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.json")
	if err := model.Save(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}
