package model

import (
	"os"
	"path/filepath"
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
