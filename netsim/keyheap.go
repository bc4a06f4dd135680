package netsim

// keyHeap is a binary min-heap of keys by (at, seq) that holds at most one key for each
// slot (a host, or a flow), and moves a slot's key in place when it changes, so that no
// superseded key is ever popped. pos is each slot's index in keys, or -1; the ready heaps of
// every host share one pos over the flows, each flow being in its own host's heap only.
type keyHeap struct {
	keys []evKey
	pos  []int32
	seq  uint64 // the order of keys set (ready heaps: the order flows became ready)
}

// newPositions is a pos for n slots, none in a heap.
func newPositions(n int) []int32 {
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	return pos
}

func (h *keyHeap) len() int    { return len(h.keys) }
func (h *keyHeap) top() *evKey { return &h.keys[0] }

// set gives slot the key (at, seq): a new key, or its key moved up or down.
func (h *keyHeap) set(slot int, at int64, seq uint64) {
	k := evKey{at: at, seq: seq, slot: int32(slot)}
	i := int(h.pos[slot])
	if i < 0 {
		i = len(h.keys)
		h.keys = append(h.keys, k)
	}
	if i > 0 && before(&k, &h.keys[(i-1)/2]) {
		h.up(i, k)
	} else {
		h.down(i, k)
	}
}

func (h *keyHeap) up(i int, k evKey) {
	for i > 0 {
		p := (i - 1) / 2
		if !before(&k, &h.keys[p]) {
			break
		}
		h.place(i, h.keys[p])
		i = p
	}
	h.place(i, k)
}

func (h *keyHeap) down(i int, k evKey) {
	n := len(h.keys)
	for {
		m := 2*i + 1
		if m >= n {
			break
		}
		if r := m + 1; r < n && before(&h.keys[r], &h.keys[m]) {
			m = r
		}
		if !before(&h.keys[m], &k) {
			break
		}
		h.place(i, h.keys[m])
		i = m
	}
	h.place(i, k)
}

func (h *keyHeap) place(i int, k evKey) {
	h.keys[i] = k
	h.pos[k.slot] = int32(i)
}

// pop removes the first key and returns it.
func (h *keyHeap) pop() evKey {
	top := h.keys[0]
	h.pos[top.slot] = -1
	n := len(h.keys) - 1
	last := h.keys[n]
	h.keys = h.keys[:n]
	if n > 0 {
		h.down(0, last)
	}
	return top
}

// before says key a fires before key b.
func before(a, b *evKey) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }
