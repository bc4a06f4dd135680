package codegen

import (
	"strings"
	"testing"
)

func TestKindNames(t *testing.T) {
	for k := kind(0); k < kindEnd; k++ {
		if strings.HasPrefix(k.String(), "kind(") {
			t.Errorf("kind %d has no name", int(k))
		}
	}
}

// TestEveryKindPrints: the printer has a handler for every kind (it panics on one without).
func TestEveryKindPrints(t *testing.T) {
	for k := kind(0); k < kindEnd; k++ {
		n := &node{Kind: k, Text: "1", Lines: []string{"a"}, Name: "t", Type: "int32_t",
			Values: []string{"1"}, Value: "1", Levels: []string{"x0 > 1"}}
		if out := print([]*node{n}); len(out) == 0 {
			t.Errorf("kind %s printed nothing", k)
		}
	}
}

func TestPrinterIndent(t *testing.T) {
	got := string(print([]*node{{Kind: kindFunc, Text: "int f(void)", Body: []*node{
		{Kind: kindIf, Text: "a", Body: []*node{{Kind: kindAcc, Value: "1"}}, Else: []*node{
			{Kind: kindLookup, Name: "t", Levels: []string{"x0 > 1", "x1 > 2"}},
		}},
		{Kind: kindLine},
		{Kind: kindStmt, Text: "return acc;"},
	}}}))
	want := "int f(void)\n{\n\tif (a) {\n\t\tacc += 1;\n\t} else {\n\t\tacc += t[\n\t\t\t((uint32_t)(x0 > 1) << 1) |\n\t\t\t(uint32_t)(x1 > 2)\n\t\t];\n\t}\n\n\treturn acc;\n}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFormNames(t *testing.T) {
	for f := Form(0); f < formEnd; f++ {
		if strings.HasPrefix(f.String(), "Form(") {
			t.Errorf("form %d has no name", int(f))
		}
	}
}
