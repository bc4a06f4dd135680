package codegen_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
)

func TestCommentSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a_prev", "a_prev"},
		{"x */ int y;", `x *\x2f int y;`},
		{"/* nested", `/\x2a nested`},
		{"a\nb", `a\x0ab`},
		{`end\`, `end\x5c`},
		{"??/", `?\x3f/`},
		{"???", `?\x3f?`},
		{"**/", `**\x2f`},
		{"*/*/", `*\x2f*\x2f`},
		{"débit", `d\xc3\xa9bit`},
		{"value = x / 2^frac", "value = x / 2^frac"},
	} {
		if got := codegen.CommentSafe(c.in); got != c.want {
			t.Errorf("CommentSafe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCodeOnly(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"int a; /* x */ int b;", "int a;   int b;"},
		{"/* a\n b */#define X 1\n", " #define X 1\n"},
		{"// c\nint a;", " \nint a;"},
		{`char *s = "/* not a comment */";`, `char *s = "/* not a comment */";`},
		// a trigraph backslash splices the comment's end together
		{"/* *??/\n/ int evil; */", "  int evil; */"},
		{"/* *\\\n/ x", "  x"},
		{"#def\\\nine X", "#define X"},
	} {
		got, err := codegen.CodeOnly([]byte(c.in))
		if err != nil {
			t.Errorf("CodeOnly(%q): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("CodeOnly(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"/* open", `"open`, "'\n'"} {
		if _, err := codegen.CodeOnly([]byte(bad)); err == nil {
			t.Errorf("CodeOnly(%q): no error", bad)
		}
	}
	ds, err := codegen.Directives([]byte("/* #no */\n  #  include  <x.h>\nint a;\n#define Y 2 /* two */\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"#include <x.h>", "#define Y 2"}, ds); d != "" {
		t.Errorf("Directives (-want +got):\n%s", d)
	}
}

// namedTrees is a small tree IR whose model and input names are the caller's.
func namedTrees(t testing.TB, name string, inputs [2]string) *quantize.TreeIR {
	m := &model.Model{Version: model.NativeVersion, Name: name, Inputs: inputs[:],
		Ensemble: &model.Ensemble{Trees: []model.Tree{{Nodes: []model.Node{
			{Feature: 0, Threshold: 0.5, Cmp: model.CmpLT, Left: 1, Right: 2},
			{Leaf: true, Value: -1},
			{Feature: 1, Threshold: -0.25, Cmp: model.CmpLE, Left: 3, Right: 4},
			{Leaf: true, Value: 0.5}, {Leaf: true, Value: 2},
		}}}}}
	ins := []quantize.Input{{Name: inputs[0], Frac: 16, Min: -1 << 20, Max: 1 << 20}, {Name: inputs[1], Frac: 16, Min: -1 << 20, Max: 1 << 20}}
	ir, err := quantize.Trees(m, ins, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ir
}

// checkNamesOnlyInComments fails unless the C printed for names is, outside its comments,
// the C printed for neutral names, and no name's bytes reach a comment unescaped.
func checkNamesOnlyInComments(t *testing.T, name string, inputs [2]string) {
	t.Helper()
	for _, inline := range []bool{false, true} {
		opt := codegen.Options{Inline: inline}
		got, err := codegen.Trees(namedTrees(t, name, inputs), opt)
		if err != nil {
			t.Fatal(err)
		}
		want, err := codegen.Trees(namedTrees(t, "m", [2]string{"x0", "x1"}), opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			file      string
			got, want []byte
		}{{got.HeaderName, got.Header, want.Header}, {got.SourceName, got.Source, want.Source}} {
			gc, err := codegen.CodeOnly(f.got)
			if err != nil {
				t.Fatalf("%s: %v\n%s", f.file, err, f.got)
			}
			wc, err := codegen.CodeOnly(f.want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gc, wc) {
				t.Fatalf("names %q %q change %s outside its comments:\n%s", name, inputs[0], f.file, cmp.Diff(string(wc), string(gc)))
			}
			// Every comment line is in the safe alphabet: printable ASCII, no backslash.
			for i, l := range strings.Split(string(f.got), "\n") {
				for _, c := range []byte(l) {
					if c < 0x20 && c != '\t' || c > 0x7e {
						t.Fatalf("%s line %d holds byte 0x%02x: %q", f.file, i+1, c, l)
					}
				}
			}
		}
	}
}

func TestNamesOnlyInComments(t *testing.T) {
	attack := "x */\n__attribute__((weak)) int nicc_policy(const int *x) { return 2147483647; }\n#define nicc_policy evil\n/*"
	for _, c := range []struct {
		name   string
		inputs [2]string
	}{
		{"m", [2]string{"x0", "x1"}},
		{attack, [2]string{attack, "*/"}},
		{"trigraph *??/", [2]string{"??/", "\\"}},
		{"splice *\\", [2]string{"a\r\n#define X", "/**/"}},
		{strings.Repeat("long", 1000), [2]string{"débit", "\x00\xff"}},
	} {
		checkNamesOnlyInComments(t, c.name, c.inputs)
	}
}

// FuzzNamesInComments feeds arbitrary model and input names through the tree printer: the C
// must equal the C of neutral names outside its comments, and its comments stay printable.
func FuzzNamesInComments(f *testing.F) {
	f.Add("m", "x0", "x1")
	f.Add("x */\n#define nicc_policy evil\n/*", "*/", "??/")
	f.Add("a\\", "\n#include <stdio.h>", "é")
	f.Fuzz(func(t *testing.T, name, in0, in1 string) {
		checkNamesOnlyInComments(t, name, [2]string{in0, in1})
	})
}
