package verify

import (
	"slices"
	"strings"
	"testing"
)

// lineWords reads a driver's output line as runDriver needs: every word counted, those that
// fit kept, and a word that is not a decimal integer an error naming it.
func TestLineWords(t *testing.T) {
	w := make([]int64, 3)
	for _, c := range []struct {
		line string
		n    int
		want []int64
		err  string
	}{
		{"7", 1, []int64{7}, ""},
		{"-2147483648 4294967295 0", 3, []int64{-2147483648, 4294967295, 0}, ""},
		{"  1  2 ", 2, []int64{1, 2}, ""},
		{"1 2 3 4 5", 5, []int64{1, 2, 3}, ""},
		{"", 0, nil, ""},
		{"1 12x 3", 1, nil, `"12x" is not a number`},
		{"--1", 0, nil, `"--1" is not a number`},
		{"-", 0, nil, `"-" is not a number`},
		{"1\t2", 0, nil, `"1\t2" is not a number`},
		{"1234567890123", 0, nil, `"1234567890123" is not a number`},
	} {
		n, err := lineWords([]byte(c.line), w)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error with %s", c.line, err, c.err)
			}
		case err != nil || n != c.n || !slices.Equal(w[:min(n, len(w))], c.want):
			t.Errorf("%q: %d words %v (%v), want %d %v", c.line, n, w[:min(n, len(w))], err, c.n, c.want)
		}
	}
}
