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

// fifo is a queue on a ring buffer, which grows as a slice does (twice as long, a quarter
// longer once long) when full.
type fifo[T any] struct {
	buf  []T
	head int
	n    int
}

func (f *fifo[T]) len() int    { return f.n }
func (f *fifo[T]) front() *T   { return &f.buf[f.head] }
func (f *fifo[T]) back() *T    { return f.at(f.n - 1) }
func (f *fifo[T]) at(i int) *T { return &f.buf[f.wrap(f.head+i)] }

// wrap is index i of the ring, i < 2*len(buf).
func (f *fifo[T]) wrap(i int) int {
	if i >= len(f.buf) {
		i -= len(f.buf)
	}
	return i
}

func (f *fifo[T]) push(v T) { *f.pushBack() = v }

// pushBack adds an element at the back, for the caller to fill in place, and returns it.
func (f *fifo[T]) pushBack() *T {
	if f.n == len(f.buf) {
		n := max(2*f.n, 8)
		if f.n >= 4096 {
			n = f.n + f.n/4
		}
		buf := make([]T, n)
		copy(buf, f.buf[f.head:])
		copy(buf[len(f.buf)-f.head:], f.buf[:f.head])
		f.buf, f.head = buf, 0
	}
	v := &f.buf[f.wrap(f.head+f.n)]
	f.n++
	return v
}

func (f *fifo[T]) pop() T {
	v := f.buf[f.head]
	f.drop()
	return v
}

// drop removes the front, which the caller has read in place (front).
func (f *fifo[T]) drop() {
	f.head = f.wrap(f.head + 1)
	f.n--
}
