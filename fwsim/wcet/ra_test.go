package wcet_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
)

// TestWCETReturnAddress: a ret or tail call is a return to the caller only where ra provably
// holds the address the function was called with. Hand-written shapes of
// fwsim/testdata/wcet/shapes.S.
func TestWCETReturnAddress(t *testing.T) {
	im, err := fwsim.LoadELF(buildWCET(t, "shapes.S", "-O2"))
	if err != nil {
		t.Fatal(err)
	}
	addr := func(name string) uint64 {
		a, _, ok := im.Symbol(name)
		if !ok {
			t.Fatalf("no symbol %s", name)
		}
		return a
	}
	for _, c := range []struct {
		entry, fn string // fn holds the refused instruction
		off       uint64
		detail    string
	}{
		// la ra, square; ret: a jump to square that returns to square.
		{"ret_elsewhere", "ret_elsewhere", 8, "a tail call to square (c:jalr zero, 0(ra)), but ra may not hold the address ret_elsewhere was called with here: ret_elsewhere+0x4 (addi ra, ra, -"},
		{"clobber_ret", "clobber_ret", 2, "ret (c:jalr zero, 0(ra)), but ra may not hold the address clobber_ret was called with here: clobber_ret+0x0 (c:add ra, zero, a1) overwrote it"},
		{"clobber_tail", "clobber_tail", 2, "a tail call to square (c:jal zero, 0x"},
		{"slot_overwritten", "slot_overwritten", 0x12, "ret (c:jalr zero, 0(ra)), but ra may not hold the address slot_overwritten was called with here: slot_overwritten+0xe (c:ld ra, 8(sp)) overwrote it"},
		// ra clobbered in a callee: refused in the callee, at its instruction.
		{"bad_callee", "clobber_ret", 2, "clobber_ret+0x0 (c:add ra, zero, a1) overwrote it"},
		// The callee returns with sp moved, so the caller's ld ra reads another slot.
		{"calls_leaky", "calls_leaky", 0x10, "calls_leaky+0xc (c:ld ra, 8(sp)) overwrote it"},
	} {
		_, err := wcet.Bound(im, c.entry, nil, wcet.Options{})
		var we *wcet.Error
		if !errors.Is(err, wcet.ErrReturnAddress) || !errors.As(err, &we) {
			t.Errorf("%s: got %v, want ErrReturnAddress", c.entry, err)
			continue
		}
		where := fmt.Sprintf("%s+0x%x", c.fn, c.off)
		if we.Func != c.fn || we.PC != addr(c.fn)+c.off || we.Where != where || !strings.Contains(we.Detail, c.detail) {
			t.Errorf("%s: %v\nwant it at %s, detail %q", c.entry, err, where, c.detail)
		}
	}

	// Accepted: ra saved and restored around calls then a tail call; ra kept in t0; a leaf
	// that moves sp (fine on its own); tail calls with ra untouched. Branch-only code: the
	// slowest run is the WCET.
	m, err := fwsim.NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{"saved_call", "ra_in_t0", "leaky", "tailer", "maybe_trap"} {
		r, err := wcet.Bound(im, entry, nil, wcet.Options{})
		if err != nil {
			t.Errorf("%s: %v", entry, err)
			continue
		}
		var worst uint64
		for _, a := range []uint64{1, 7, 3037000500, 1 << 40, ^uint64(4)} { // 3037000500² is negative
			res, err := m.Call(entry, a, 3)
			if err != nil {
				t.Fatalf("%s(%d): %v", entry, a, err)
			}
			if res.Cycles > r.Cycles {
				t.Fatalf("%s(%d): measured %d > WCET %d", entry, a, res.Cycles, r.Cycles)
			}
			worst = max(worst, res.Cycles)
		}
		if worst != r.Cycles {
			t.Errorf("%s: WCET %d, slowest run %d: want equal", entry, r.Cycles, worst)
		}
	}
}
