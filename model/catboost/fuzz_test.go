package catboost

import (
	"errors"
	"math"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
)

// tiny is a CatBoost JSON model cut to what Parse reads: one tree of depth 2.
const tiny = `{"features_info":{"float_features":[
 {"borders":[0.5],"feature_id":"a","feature_index":0,"flat_feature_index":0,"has_nans":false,"nan_value_treatment":"AsIs"},
 {"borders":[-1,2],"feature_id":"b","feature_index":1,"flat_feature_index":1,"has_nans":true,"nan_value_treatment":"AsTrue"}]},
 "model_info":{"params":{"loss_function":{"params":{},"type":"RMSE"}}},
 "oblivious_trees":[{"leaf_values":[1,2,3,4],"leaf_weights":[1,1,1,1],"splits":[
  {"border":0.5,"float_feature_index":0,"split_index":0,"split_type":"FloatFeature"},
  {"border":2,"float_feature_index":1,"split_index":2,"split_type":"FloatFeature"}]}],
 "scale_and_bias":[1,[0.25]]}`

// FuzzParse: Parse never panics, every error is a *model.ParseError, and every model it
// returns passes Validate, evaluates, writes as native JSON and is one Detect recognises.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"single_tree"} {
		f.Add(testutil.LoadCatBoost(f, testdata, name).Model)
	}
	f.Add([]byte(tiny))
	f.Add([]byte(`{"features_info":{"float_features":[{"borders":[0]}]},"trees":[{"value":1}]}`))
	f.Add([]byte(`{"features_info":{"float_features":[{"borders":[0]}]},"oblivious_trees":[{"leaf_values":[1,2,3],"splits":[]}],"scale_and_bias":[2,[1,2]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var pe *model.ParseError
			if !errors.As(err, &pe) {
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
		if !m.Ensemble.Float32Splits || m.Ensemble.Float32 {
			t.Fatal("a CatBoost model compares in float32 and sums in float64")
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
