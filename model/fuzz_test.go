package model

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func FuzzUnmarshal(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/models/*.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, m := range mixedModels() {
		b, err := Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Unmarshal(data)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Unmarshal returned an invalid model: %v", err)
		}
		x := make([]float64, m.NumInputs())
		if got := m.Eval(m.NewState(), x); len(got) != m.NumOutputs() {
			t.Fatalf("Eval gave %d outputs, want %d", len(got), m.NumOutputs())
		}
		m.Summarize()
		if _, err := Marshal(m); err != nil {
			t.Fatalf("a model that loaded does not write back: %v", err)
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n3,4\n"))
	f.Add([]byte("1\t2\n3\tNaN\n"))
	f.Add([]byte("x\n\n-Inf\n1e999\n"))
	f.Add([]byte("\ufeff\"a\",b\n1,NaN\n"))
	f.Add([]byte("1,,3\n4,NA,6\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadCSV(bytes.NewReader(data))
		want, wantErr := readOneByOne(data)
		if !sameRead(rows, err, want, wantErr) {
			t.Fatalf("ReadCSV gives %v, %v; one row at a time %v, %v", rows, err, want, wantErr)
		}
		if err != nil {
			return
		}
		if len(rows.Data) == 0 {
			t.Fatal("ReadCSV returned no rows without an error")
		}
		for i, r := range rows.Data {
			if len(r) != len(rows.Data[0]) {
				t.Fatalf("row %d has width %d, row 0 has %d", i, len(r), len(rows.Data[0]))
			}
		}
		if rows.Names != nil && len(rows.Names) != len(rows.Data[0]) {
			t.Fatalf("%d names for %d columns", len(rows.Names), len(rows.Data[0]))
		}
		for i, n := range rows.Names {
			if _, ok := name(n); !ok || slices.Index(rows.Names, n) != i {
				t.Fatalf("header name %d, %q, is not a unique name", i+1, n)
			}
		}
	})
}
