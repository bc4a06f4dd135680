package model

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// readOneByOne reads data one row at a time (RowReader.Next), the reference for readAll's
// batches: the rows, or the first error.
func readOneByOne(data []byte) (*Rows, error) {
	r, err := NewRowReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out := &Rows{Names: r.Names}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out.Data = append(out.Data, slices.Clone(row))
	}
}

// sameRead reports whether two reads gave the same rows (NaN equal to NaN) or the same error.
func sameRead(a *Rows, aErr error, b *Rows, bErr error) bool {
	if aErr != nil || bErr != nil {
		return aErr != nil && bErr != nil && aErr.Error() == bErr.Error()
	}
	return slices.Equal(a.Names, b.Names) && slices.EqualFunc(a.Data, b.Data, func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(u, v float64) bool { return u == v || math.IsNaN(u) && math.IsNaN(v) })
	})
}

// ReadCSV, parsing batches of lines on every CPU, gives what reading one row at a time gives
// on files of many batches: the same rows, or the same error at the same line (a bad value, a
// wrong width, blank lines counted), whichever batch it falls in.
func TestReadCSVBatchesAsOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	for trial := range 40 {
		var buf strings.Builder
		if trial%2 == 0 {
			buf.WriteString("a,b,c\n")
		}
		lines := 1 + rng.IntN(5*batchLines)
		bad := -1
		if trial%4 != 3 {
			bad = rng.IntN(lines)
		}
		for i := range lines {
			switch {
			case i == bad && trial%3 == 0:
				buf.WriteString("1,2\n")
			case i == bad && trial%3 == 1:
				buf.WriteString("1,x,3\n")
			case i == bad:
				buf.WriteString("1,2,1e999\n")
			case rng.IntN(50) == 0:
				buf.WriteString("  \n")
			default:
				fmt.Fprintf(&buf, "%v,%v, %v\n", rng.NormFloat64(), rng.Float64()*1e6, rng.IntN(1000))
			}
		}
		data := []byte(buf.String())
		got, err := ReadCSV(bytes.NewReader(data))
		want, wantErr := readOneByOne(data)
		if !sameRead(got, err, want, wantErr) {
			t.Fatalf("trial %d (%d lines, bad %d): ReadCSV gives %d rows, %v; one row at a time %d rows, %v", trial, lines, bad, rowsOf(got), err, rowsOf(want), wantErr)
		}
		if (bad >= 0) != (err != nil) {
			t.Fatalf("trial %d (bad line %d): error %v", trial, bad, err)
		}
	}
}

func rowsOf(r *Rows) int {
	if r == nil {
		return -1
	}
	return len(r.Data)
}
