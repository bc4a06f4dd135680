package model

import (
	"io"
	"math"
	"runtime"
	"sync"
)

// readAll parses a text file's lines on every CPU: one goroutine reads lines into batches,
// workers parse each batch into one block of floats, and the rows are taken in file order, so
// the rows and the error (the first by line, the limit's included) are what reading one line
// at a time gives.

// batchLines is how many lines a batch holds: enough that handing one over costs little.
const batchLines = 2048

// lineBatch is a run of non-blank lines, trimmed, with where each is; once parsed, the
// values of its first good lines, row after row, and the error of the line after them.
type lineBatch struct {
	text    []string
	lines   []int
	reads   []int64 // the bytes read up to each line's end
	readErr error   // the reader's error after the batch's lines (not io.EOF)

	vals     []float64
	good     int
	parseErr error
	done     chan struct{} // closed once parsed
}

func (b *lineBatch) parse(r *RowReader) {
	b.vals = make([]float64, len(b.text)*r.width)
	for i, text := range b.text {
		if b.parseErr = r.values(text, b.lines[i], b.vals[i*r.width:(i+1)*r.width]); b.parseErr != nil {
			break
		}
		b.good++
	}
	close(b.done)
}

// readAll holds the rows, up to limit bytes: a batch's values are one block, so a row costs
// its values and a slice header rather than an allocation of its own.
func (r *RowReader) readAll(limit int64) (*Rows, error) {
	out := &Rows{Names: r.Names}
	hold := func(row []float64, line int, read int64) error {
		if int64(len(out.Data)+1)*rowBytes(r.width) > limit {
			return r.tooMany(len(out.Data)+1, line, read, limit)
		}
		out.Data = append(out.Data, row[:r.width:r.width])
		return nil
	}
	if r.npy != nil {
		return r.readAllNPY(out, limit)
	}
	// The first row, read to tell a header from data.
	if r.ahead {
		row, _ := r.Next()
		if err := hold(append([]float64(nil), row...), r.line, r.read); err != nil {
			return nil, err
		}
	}
	workers := runtime.NumCPU()
	todo := make(chan *lineBatch, workers)
	inOrder := make(chan *lineBatch, 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	for range workers {
		wg.Go(func() {
			for b := range todo {
				b.parse(r)
			}
		})
	}
	wg.Go(func() { r.batches(todo, inOrder, stop) })
	for b := range inOrder {
		<-b.done
		for i := range b.good {
			if err := hold(b.vals[i*r.width:], b.lines[i], b.reads[i]); err != nil {
				return nil, err
			}
		}
		if b.parseErr != nil {
			return nil, b.parseErr
		}
		if b.readErr != nil {
			return nil, b.readErr
		}
	}
	return out, nil
}

// batches reads the lines left into batches, each sent to inOrder (to take) and to todo (to
// parse), until the input ends or fails or stop closes; then it closes both.
func (r *RowReader) batches(todo, inOrder chan<- *lineBatch, stop <-chan struct{}) {
	defer close(todo)
	defer close(inOrder)
	for {
		b := &lineBatch{done: make(chan struct{})}
		var err error
		for len(b.text) < batchLines {
			var text string
			if text, err = r.scan(); err != nil {
				break
			}
			b.text, b.lines, b.reads = append(b.text, text), append(b.lines, r.line), append(b.reads, r.read)
		}
		if err != nil && err != io.EOF {
			b.readErr = err
		}
		if len(b.text) > 0 || b.readErr != nil {
			for _, to := range []chan<- *lineBatch{inOrder, todo} {
				select {
				case to <- b:
				case <-stop:
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// readAllNPY holds a NumPy array's rows, read a block at a time into blocks of values. Its
// header says how many rows there are, so rows over limit bytes are refused before any is read.
func (r *RowReader) readAllNPY(out *Rows, limit int64) (*Rows, error) {
	a, w := r.npy, r.width
	if left := a.rows - a.done; left > limit/rowBytes(w) {
		need := "over 8 EiB"
		if left <= math.MaxInt64/rowBytes(w) {
			need = sizeText(left * rowBytes(w))
		}
		return nil, r.errorf("%d rows of %d values need %s, over the %s limit on rows held in memory (rows × (8 bytes × values + 24))",
			left, w, need, sizeText(limit))
	}
	// A file's size bounds its rows (readNPY checked; an .npz's as its zip entry declares it),
	// and so does the limit, so they are held in one slice from the start; a stream's grow
	// as its rows arrive.
	if r.size > 0 {
		out.Data = make([][]float64, 0, a.rows-a.done)
	}
	for {
		block := make([]float64, min(a.rows-a.done, int64(max(1, npyBlock/8/w)))*int64(w))
		got, err := a.read(block)
		for i := range got {
			out.Data = append(out.Data, block[i*w:(i+1)*w:(i+1)*w])
		}
		r.line += got
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, r.wrap(err)
		}
	}
}
