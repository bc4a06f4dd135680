package model

import (
	"bytes"
	"fmt"
	"io"
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
