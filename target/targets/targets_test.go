package targets

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	seen := map[string]bool{}
	for _, want := range All {
		got, err := Parse(want.Name())
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", want.Name(), got, err, want)
		}
		if seen[want.ELF()] {
			t.Errorf("%s: ELF %s is another target's too", want.Name(), want.ELF())
		}
		seen[want.ELF()] = true
	}
	if _, err := Parse("cuda"); err == nil || !strings.Contains(err.Error(), "nicc, doca") {
		t.Errorf("Parse(cuda): %v, want an error listing nicc, doca", err)
	}
}
