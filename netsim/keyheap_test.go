package netsim

import (
	"math/rand/v2"
	"testing"
)

// A keyHeap pops, after any sequence of sets (new keys, keys moved up or down) and pops, the
// least (at, seq) of the slots it holds, each slot's last key, as a scan of them finds it.
func TestKeyHeap(t *testing.T) {
	const slots = 40
	r := rand.New(rand.NewPCG(1, 2))
	h := keyHeap{pos: newPositions(slots)}
	want := map[int]evKey{} // the slots held and their keys
	var seq uint64
	for step := range 20000 {
		if r.IntN(3) > 0 {
			s := r.IntN(slots)
			k := evKey{at: r.Int64N(50), seq: seq, slot: int32(s)}
			seq++
			h.set(s, k.at, k.seq)
			want[s] = k
		} else if len(want) > 0 {
			var least *evKey
			for _, k := range want {
				if least == nil || before(&k, least) {
					least = &k
				}
			}
			got := h.pop()
			if held := h.pos[got.slot] >= 0; got != *least || held {
				t.Fatalf("step %d: popped %+v (still held: %v), want %+v", step, got, held, *least)
			}
			delete(want, int(got.slot))
		}
		if h.len() != len(want) {
			t.Fatalf("step %d: %d keys held, want %d", step, h.len(), len(want))
		}
	}
}
