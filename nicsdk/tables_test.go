package nicsdk

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cTable returns the values of the static const uint32_t table that follows marker in
// rlcc.h.
func cTable(t *testing.T, marker string) []uint64 {
	t.Helper()
	src := string(mustRead(RLCCHeaderName))
	i := strings.Index(src, marker)
	if i < 0 {
		t.Fatalf("rlcc.h has no %q", marker)
	}
	body := src[i+len(marker):]
	body = body[:strings.Index(body, "};")]
	var vals []uint64
	for _, m := range regexp.MustCompile(`(\d+)u`).FindAllStringSubmatch(body, -1) {
		v, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	return vals
}

// The tables in rlcc.h are the formulas their comments give. (Exactness of the results
// built from them is what the exhaustive tests prove; this keeps the tables reproducible.)
func TestTables(t *testing.T) {
	t.Parallel()
	sq := cTable(t, "static const uint32_t tab[193] = {")
	if len(sq) != 193 {
		t.Fatalf("sqrt table: %d entries", len(sq))
	}
	for i, v := range sq {
		n := uint64(64+i) << 40 // tab[i] = floor(sqrt(64 + i) * 2^20) = floor(sqrt(n))
		if v*v > n || (v+1)*(v+1) <= n {
			t.Errorf("sqrt tab[%d] = %d, want floor(sqrt(%d << 40))", i, v, 64+i)
		}
	}
	rc := cTable(t, "static const uint32_t tab[53] = {")
	if len(rc) != 53 {
		t.Fatalf("reciprocal table: %d entries", len(rc))
	}
	for j, v := range rc {
		d := uint64(Q16One + 256*j) // tab[j] = ceil(2^40 / d)
		if want := (uint64(1)<<40 + d - 1) / d; v != want {
			t.Errorf("reciprocal tab[%d] = %d, want %d", j, v, want)
		}
	}
	// The Go twins read the same tables.
	for _, tb := range []struct {
		name string
		c    []uint64
		g    []uint64
	}{{"sqrt", sq, sqrtTab[:]}, {"division", cTable(t, "static const uint32_t tab[257] = {"), divTab[:]}} {
		if !slices.Equal(tb.c, tb.g) {
			t.Errorf("%s table: rlcc.h and the Go twin differ", tb.name)
		}
	}
	// The reciprocal table covers every divisor: u = floor(K * 2^16 / 2^16) = K at y = -1.
	if (KQ16>>8)+1 >= len(rc) {
		t.Errorf("reciprocal table too short for u = %d", KQ16)
	}
}
