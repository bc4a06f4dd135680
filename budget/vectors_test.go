package budget

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadVectors(t *testing.T) {
	in := "# comment\n\n7 0x10 -1 hex:0aff # trailing\nhex: 18446744073709551615\n"
	got, err := ReadVectors(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Vector{
		{Line: 3, Args: []Arg{{Int: 7}, {Int: 16}, {Int: 1<<64 - 1}, {Bytes: []byte{0x0a, 0xff}}}},
		{Line: 4, Args: []Arg{{Bytes: []byte{}}, {Int: 1<<64 - 1}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestReadVectorsRejects(t *testing.T) {
	cases := map[string]string{
		"":                        "no vectors",
		"# only a comment\n":      "no vectors",
		"1 2 3 4 5 6 7 8 9\n":     "line 1: 9 arguments, at most 8",
		"1\nhex:0g\n":             "line 2: argument 1:",
		"hex:abc\n":               "odd length",
		"1.5\n":                   `"1.5" is not an integer`,
		"-99999999999999999999\n": "not a 64-bit integer",
	}
	for in, want := range cases {
		if _, err := ReadVectors(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func FuzzReadVectors(f *testing.F) {
	f.Add("1 2 hex:00\n")
	f.Add("# c\n-5 0xffffffffffffffff hex:\n")
	f.Fuzz(func(t *testing.T, in string) {
		vs, err := ReadVectors(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, v := range vs {
			if len(v.Args) == 0 || len(v.Args) > maxArgs {
				t.Fatalf("line %d: %d arguments", v.Line, len(v.Args))
			}
		}
	})
}
