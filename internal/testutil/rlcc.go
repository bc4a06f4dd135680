package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/onnx"
)

// WithRLCC writes the nicc JSON network at path with RL-CC parameters in its file, as nicc
// JSON and as ONNX, and returns both paths.
func WithRLCC(t testing.TB, path string, params map[string]float64) (string, string) {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m.RLCC = params
	js, err := model.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := onnx.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jp, op := filepath.Join(dir, "policy.json"), filepath.Join(dir, "policy.onnx")
	if err := os.WriteFile(jp, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(op, pb, 0o644); err != nil {
		t.Fatal(err)
	}
	return jp, op
}
