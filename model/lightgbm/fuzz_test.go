package lightgbm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(repoDir, "*"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || filepath.Ext(p) == ".md" {
			continue
		}
		f.Add(b)
		if filepath.Ext(p) == ".txt" { // bare Tree=N blocks: also seed them as whole models
			f.Add(wrap("regression", 2, string(b)))
		}
	}
	f.Add(small())
	f.Add(wrap("binary sigmoid:2", 2, smallTree, smallTree))
	f.Add(tree3Numeric(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *model.ParseError", err, err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Parse returned an invalid model: %v", err)
		}
		if _, err := model.Marshal(m); err != nil {
			t.Fatalf("a parsed model does not write back: %v", err)
		}
		// The IR must take LightGBM's decision path for any input.
		_, trees, err := parse(data)
		if err != nil {
			t.Fatalf("Parse succeeded but parse failed: %v", err)
		}
		pv := probes(trees)
		if len(pv) > 64 {
			pv = pv[:64]
		}
		x := make([]float64, m.NumInputs())
		for _, v := range pv {
			for i := range x {
				x[i] = v
			}
			if got, want := rawScore(m, x), lgbPredictRaw(trees, x); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("all features %v: IR raw score %v, LightGBM's decision path %v", v, got, want)
			}
		}
		m.Eval(nil, x)
	})
}
