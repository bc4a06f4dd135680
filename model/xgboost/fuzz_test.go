package xgboost

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// FuzzParse: Parse never panics, every error is a *model.ParseError, and every model it
// returns passes Validate, evaluates, and is one Detect recognises.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(models, "*xgb*.json"))
	if len(paths) == 0 {
		f.Fatal("no XGBoost models under testdata/models")
	}
	ubj, _ := filepath.Glob(filepath.Join(models, "*.ubj"))
	paths = append(paths, ubj...)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(tiny))
	f.Add(edit(f, `"split_conditions":[5E-1,-2.5E-1,7.5E-1]`, `"split_conditions":[5E-1,NaN,-Infinity]`))
	f.Add(edit(f, `"reg:squarederror"`, `"binary:logistic"`, `"default_left":[1,0,0]`, `"default_left":[true,false,false]`))
	f.Add(edit(f, `"gradient_booster":{"model"`, `"gradient_booster":{"name":"dart","weight_drop":[5E-1],"gbtree":{"model"`, `"name":"gbtree"},`, `"name":"gbtree"}},`))
	f.Add(fiveNodes(f, "[1,3,-1,-1,-1]", "[2,4,-1,-1,-1]"))
	f.Add(fiveNodes(f, "[1,3,-1,1,-1]", "[2,4,-1,2,-1]"))
	f.Add(fiveNodes(f, "[1,-1,-1,-1,-1]", "[2,-1,-1,-1,-1]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *model.ParseError: %v", err, err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Parse returned an invalid model: %v", err)
		}
		if !Detect(data) {
			t.Fatal("Parse read a model that Detect does not recognise: --format auto would not give it to Parse")
		}
		if !m.Ensemble.Float32 {
			t.Fatal("an XGBoost model must compare in float32")
		}
		for _, v := range []float64{0, math.NaN(), 1e30} {
			x := make([]float64, m.NumInputs())
			for i := range x {
				x[i] = v
			}
			m.Eval(nil, x)
		}
		if _, err := model.Marshal(m); err != nil {
			t.Fatalf("a parsed model does not write as native JSON: %v", err)
		}
	})
}
