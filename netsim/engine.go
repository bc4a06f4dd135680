package netsim

import "github.com/nicc-dev/nicc/nicsdk"

// engine is a NIC's CC engine: threads hardware threads serving a FIFO of at most depth
// waiting events. An event that finds every thread busy and the FIFO full is dropped, and
// counted, as the NIC's counters count it.
type engine struct {
	threads, depth int
	busy           int
	pending        []pending
	head           int
	handled        int64
	dropped        int64
}

type pending struct {
	flow int32
	ev   nicsdk.Event
}

func (e *engine) waiting() int { return len(e.pending) - e.head }

func (e *engine) enqueue(p pending) { e.pending = append(e.pending, p) }

func (e *engine) dequeue() pending {
	p := e.pending[e.head]
	e.head++
	if e.head > 256 && e.head*2 > len(e.pending) {
		e.pending = append(e.pending[:0], e.pending[e.head:]...)
		e.head = 0
	}
	return p
}
