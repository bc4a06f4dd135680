package termtext

import (
	"fmt"
	"strings"
	"testing"
)

// TestPrintable: printable text, non-ASCII included, is kept byte for byte; every rune a
// terminal would act on or not show is escaped as Go escapes it.
func TestPrintable(t *testing.T) {
	for _, s := range []string{"", "a_prev", "x[0], o_prev", "µs → Σ leaf ≤ 4, é", `C:\path "q"`, "a b"} {
		if got := Printable(s); got != s {
			t.Errorf("Printable(%q) = %q, want it unchanged", s, got)
		}
	}
	for in, want := range map[string]string{
		"a\nb":                      `a\nb`,
		"a\r\tb":                    `a\r\tb`,
		"\x1b[2J":                   `\x1b[2J`,
		"a\x00b\x7f":                `a\x00b\x7f`,
		"\u202eevil\u2066":          `\u202eevil\u2066`,
		"zero\u200bwidth\u2028line": `zero\u200bwidth\u2028line`,
		"c1\u0085\u009b":            `c1\u0085\u009b`,
		"bad\xff\xc3":               `bad\xff\xc3`,
		"é\x1b":                     `é\x1b`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestTextf: Printf prints what fmt.Fprintf prints, widths and precisions included, with each
// operand Printable and the format's own tabs and newlines kept.
func TestTextf(t *testing.T) {
	var b strings.Builder
	format := "model\t%s (%.12s) %-6s|%5d %.3f %v\n"
	args := []any{"rlcc_xgb", "f5691aee2b55a9e2", "rank", 42, 0.125, []string{"a", "b"}}
	if _, err := Printf(&b, format, args...); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(format, args...); b.String() != want {
		t.Errorf("Printf = %q, fmt gives %q", b.String(), want)
	}
	b.Reset()
	Printf(&b, "inputs\t%s\n", "a\n verified 0 mismatches\x1b[2J")
	Println(&b, "x\ry", 3)
	if want := "inputs\ta\\n verified 0 mismatches\\x1b[2J\nx\\ry 3\n"; b.String() != want {
		t.Errorf("Printf and Println wrote %q, want %q", b.String(), want)
	}
}
