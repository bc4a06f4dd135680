package catboost

import (
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model/modeltest"
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
	// Keys as encoding/json matches them, which the list caps must match too.
	f.Add([]byte(`{"model_info":{"params":{"loss_function":{"type":"RMSE"}}},"Features_Info":{"float_feature\u0073":[{"borders":[0]}]},"OBLIVIOUS_trees":[{"leaf_values":[1],"splits":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := modeltest.CheckParsed(t, data, Parse, Detect)
		if m == nil {
			return
		}
		if !m.Ensemble.Float32Splits || m.Ensemble.Float32 {
			t.Fatal("a CatBoost model compares in float32 and sums in float64")
		}
	})
}
