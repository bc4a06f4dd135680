package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadCSV reads 200,000 rows of 5 values as nicc distill's --states are written
// (full float64 precision), and reports MB/s (issue 31 has parsing dominate distill end to
// end): ReadCSV, which parses batches of lines on every CPU, beside reading one row at a
// time (RowReader.Next, as eval streams its rows), its peer in the same run.
func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("a_prev,o,a_prev2,o_prev,y\n")
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200_000 {
		fmt.Fprintf(&buf, "%v,%v,%v,%v,%v\n", rng.Float64(), 128*rng.Float64(), rng.Float64(), 128*rng.Float64(), 2*rng.Float64()-1)
	}
	data := buf.Bytes()
	b.Run("ReadCSV", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r, err := ReadCSV(bytes.NewReader(data))
			if err != nil || len(r.Data) != 200_000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-row-at-a-time", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r, err := NewRowReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 200_000 {
				b.Fatal(n)
			}
		}
	})
}

// BenchmarkReadNPY reads and holds 2,000,000 rows of 4 float64 (nicc distill's --states as
// np.save writes them; issue 31, target 5): readAll, a block at a time into blocks of values,
// beside holding a copy of each row RowReader.Next reads (what readAll did before), its peer
// in the same run. MB/s of the file.
func BenchmarkReadNPY(b *testing.B) {
	const rows, cols = 2_000_000, 4
	data := make([]byte, rows*cols*8)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], math.Float64bits(128*rng.Float64()))
	}
	file := npyFile(fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols), data)
	open := func(b *testing.B) *RowReader {
		r := newRowReader(bytes.NewReader(nil))
		if err := r.startNPY(bytes.NewReader(file), int64(len(file))); err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.Run("readAll", func(b *testing.B) {
		b.SetBytes(int64(len(file)))
		for b.Loop() {
			r, err := open(b).readAll(MaxHeldBytes)
			if err != nil || len(r.Data) != rows {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-row-at-a-time", func(b *testing.B) {
		b.SetBytes(int64(len(file)))
		for b.Loop() {
			r, held := open(b), [][]float64(nil)
			for {
				row, err := r.Next()
				if err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
				held = append(held, append([]float64(nil), row...))
			}
			if len(held) != rows {
				b.Fatal(len(held))
			}
		}
	})
}
