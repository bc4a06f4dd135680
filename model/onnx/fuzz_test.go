package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// FuzzParse: no input panics; every error is a one-line *model.ParseError; every model that
// comes back validates, saves as native JSON and evaluates.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(models, "*.onnx"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed models in %s: %v", models, err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(pbModel{opset: 14, graph: lstmGraph()}.encode())
	f.Add(pbModel{opset: 14, graph: lstmBatchFirstGraph([]int64{1, 0, 2}, []int64{1, 0, 2})}.encode())
	for _, c := range handBuilt() {
		f.Add(pbModel{opset: c.opset, graph: c.g}.encode())
	}
	f.Add(pbModel{opset: 11, graph: gemmGraph([]pbNode{
		node("Constant", "s", nil, "s", aTensor("value", i64("", []int64{2}, 3, -1))),
		node("Reshape", "r", []string{"x", "s"}, "xc"),
		node("Gemm", "g", []string{"xc", "W", "C"}, "z", aInt("transA", 1), aFloat("alpha", 2)),
		node("Clip", "c", []string{"z", "", "hi"}, "y"),
	}, fl("W", []int64{3, 2}, 1, 2, 3, 4, 5, 6), fl("C", []int64{2}, 1, 2), fl("hi", nil, 3))}.encode())

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *model.ParseError: %v", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		mustBeUsable(t, m)
	})
}
