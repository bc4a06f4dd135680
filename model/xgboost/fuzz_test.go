package xgboost

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/model/modeltest"
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
	// A dart nested in a dart (not decoded), and best_iteration as a number (ignored).
	f.Add(edit(f, `"gradient_booster":{"model"`, `"gradient_booster":{"name":"dart","weight_drop":[5E-1],"gbtree":{"name":"dart","gbtree":{},"model"`, `"name":"gbtree"},`, `"name":"gbtree"}},`))
	f.Add([]byte(`{"learner":{"attributes":{"best_iteration":2,"Best_Iteration":["1"]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := modeltest.CheckParsed(t, data, Parse, Detect)
		if m == nil {
			return
		}
		if !m.Ensemble.Float32 {
			t.Fatal("an XGBoost model must compare in float32")
		}
	})
}
