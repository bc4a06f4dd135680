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

// fifo is a queue on a ring buffer, which doubles when full.
type fifo[T any] struct {
	buf  []T // its length a power of two, or 0
	head int
	n    int
}

func (f *fifo[T]) len() int    { return f.n }
func (f *fifo[T]) at(i int) *T { return &f.buf[(f.head+i)&(len(f.buf)-1)] }
func (f *fifo[T]) front() *T   { return &f.buf[f.head] }
func (f *fifo[T]) back() *T    { return f.at(f.n - 1) }

func (f *fifo[T]) push(v T) {
	if f.n == len(f.buf) {
		buf := make([]T, max(2*len(f.buf), 8))
		for i := range f.n {
			buf[i] = *f.at(i)
		}
		f.buf, f.head = buf, 0
	}
	*f.at(f.n) = v
	f.n++
}

func (f *fifo[T]) pop() T {
	v := f.buf[f.head]
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	return v
}
