// Package termtext is how every text report reaches a terminal: Printable escapes what comes
// from files, Printf and Println are the writers every report prints with, and the few
// number formats reports share.
package termtext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text reports reach a terminal, and much of what they print comes from files: a model's
// name and its inputs' (from inside the model file), the headers of CSV rows, the names a
// report.json read back records, file paths. Printable is the one escaping of such text for a
// terminal, as codegen.CommentSafe is for C comments, and Printf and Println are the writers
// every text report prints with: each operand is formatted as fmt would, then made Printable,
// while the report's own words, tabs and newlines come from its format string. So no name can
// start a line, move the cursor or clear the screen. The CLI prints its one-line errors
// through Printable too (cmd/nicc). JSON output needs none of this: encoding/json escapes
// control characters.

// Printable is s with everything a terminal would not show as itself escaped as Go escapes
// it in a quoted string: control characters (newline, carriage return, tab, ESC, NUL, DEL,
// the C1 controls), format characters such as the bidirectional overrides (U+202E) and
// zero-width spaces, line and paragraph separators, and invalid UTF-8 (\xNN per byte). Every
// other rune, non-ASCII letters and symbols included, is kept, so a printable name is
// unchanged; a backslash is kept too (errors already quote names with %q).
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// printable formats its value as fmt would with the verb, flags, width and precision it is
// printed with, then makes the result Printable.
type printable struct{ v any }

func (p printable) Format(f fmt.State, verb rune) {
	io.WriteString(f, Printable(fmt.Sprintf(fmt.FormatString(f, verb), p.v)))
}

func printables(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		out[i] = printable{v}
	}
	return out
}

// Printf is fmt.Fprintf for text reports: every operand Printable (see above).
func Printf(w io.Writer, format string, a ...any) (int, error) {
	return fmt.Fprintf(w, format, printables(a)...)
}

// Println is fmt.Fprintln for text reports: every operand Printable.
func Println(w io.Writer, a ...any) (int, error) {
	return fmt.Fprintln(w, printables(a)...)
}

// Num prints v in the fewest digits that read back as v.
func Num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Num3 prints v in 4 significant digits.
func Num3(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// Thousands writes n with commas between groups of three digits.
func Thousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
