package netsim

import "github.com/nicc-dev/nicc/nicsdk"

// engine is a NIC's CC engine: threads hardware threads serving a FIFO of at most depth
// waiting events. An event that finds every thread busy and the FIFO full is dropped, and
// counted, as the NIC's counters count it.
type engine struct {
	threads, depth int
	busy           int
	pending        fifo[pending]
}

type pending struct {
	flow int32
	ev   nicsdk.Event
}

// fifo is a queue on a slice that reuses its front once enough of it is consumed.
type fifo[T any] struct {
	q    []T
	head int
}

func (f *fifo[T]) len() int  { return len(f.q) - f.head }
func (f *fifo[T]) push(v T)  { f.q = append(f.q, v) }
func (f *fifo[T]) front() *T { return &f.q[f.head] }

func (f *fifo[T]) pop() T {
	v := f.q[f.head]
	f.head++
	if f.head > 256 && f.head*2 > len(f.q) {
		f.q = append(f.q[:0], f.q[f.head:]...)
		f.head = 0
	}
	return v
}
