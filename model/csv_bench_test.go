package model

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadCSV reads 200,000 rows of 5 values as nicc distill's --states are written
// (full float64 precision), and reports MB/s: issue 31 has parsing dominate distill end to end.
func BenchmarkReadCSV(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("a_prev,o,a_prev2,o_prev,y\n")
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200_000 {
		fmt.Fprintf(&buf, "%v,%v,%v,%v,%v\n", rng.Float64(), 128*rng.Float64(), rng.Float64(), 128*rng.Float64(), 2*rng.Float64()-1)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, err := ReadCSV(bytes.NewReader(data))
		if err != nil || len(r.Data) != 200_000 {
			b.Fatal(err)
		}
	}
}
