package catboost

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
)

const testdata = "../../testdata/catboost"

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestConformance runs every row CatBoost predicted through the converted model: the raw
// value, and the model's output (what nicc eval prints: the probability for Logloss), must be
// within 1e-6 relative of CatBoost's.
func TestConformance(t *testing.T) {
	for _, name := range testutil.CatBoostConforming {
		t.Run(name, func(t *testing.T) {
			fx := testutil.LoadCatBoost(t, testdata, name)
			m, err := Parse(fx.Model)
			if err != nil {
				t.Fatal(err)
			}
			native, err := model.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := model.Unmarshal(native); err != nil || !back.Ensemble.Float32Splits {
				t.Fatalf("native JSON round trip: %v, float32 splits lost", err)
			}
			raw := *m.Ensemble
			raw.Transform = model.TransformIdentity
			nanRows, maxRaw, maxOut := 0, 0.0, 0.0
			for i, x := range fx.Rows {
				if len(x) != m.NumInputs() {
					t.Fatalf("row %d has %d values; the model reads %d", i, len(x), m.NumInputs())
				}
				for _, v := range x {
					if math.IsNaN(v) {
						nanRows++
						break
					}
				}
				r, out := raw.Eval(x), m.Eval(nil, x)[0]
				wantRaw, wantOut := fx.Raw(i), fx.Output(i, m.Ensemble.Transform == model.TransformSigmoid)
				eRaw, eOut := relErr(r, wantRaw), relErr(out, wantOut)
				maxRaw, maxOut = math.Max(maxRaw, eRaw), math.Max(maxOut, eOut)
				if eRaw > 1e-6 || eOut > 1e-6 {
					t.Errorf("row %d %v: raw %v, output %v; CatBoost's %s %v", i, x, r, out, fx.Kind, fx.Want[i])
				}
			}
			if strings.HasPrefix(name, "nan_") && nanRows == 0 {
				t.Error("no row has a NaN feature")
			}
			t.Logf("%d rows (%d with NaN), CatBoost's %s: max relative error %.3g raw, %.3g output; %s",
				len(fx.Rows), nanRows, fx.Kind, maxRaw, maxOut, m.Doc)
		})
	}
}

// TestRefused: each real CatBoost model nicc cannot represent is refused with one line that
// says why.
func TestRefused(t *testing.T) {
	for name, why := range testutil.CatBoostRefused {
		t.Run(name, func(t *testing.T) {
			fx := testutil.LoadCatBoost(t, testdata, name)
			if !Detect(fx.Model) {
				t.Error("not detected as CatBoost: --format auto would not give it to Parse")
			}
			_, err := Parse(fx.Model)
			var pe *model.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v; want one line saying %q", err, why)
			}
		})
	}
}

// TestRefusedOneByOne: every refusal, each on the tiny model with one thing changed, gives
// one line that names it.
func TestRefusedOneByOne(t *testing.T) {
	if _, err := Parse([]byte(tiny)); err != nil {
		t.Fatalf("tiny: %v", err)
	}
	for _, c := range []struct{ name, from, to, why string }{
		{"text features", `"float_features":[`, `"text_features":[{"feature_id":"t"}],"float_features":[`, "text features (1)"},
		{"embedding features", `"float_features":[`, `"embedding_features":[{},{}],"float_features":[`, "embedding features (2)"},
		{"estimated features", `"float_features":[`, `"estimated_features":[{}],"float_features":[`, "estimated features"},
		{"one-hot split", `"split_type":"FloatFeature"}]`, `"split_type":"OneHotFeature"}]`, `split 1 is a "OneHotFeature" split`},
		{"multi-target loss", `"type":"RMSE"`, `"type":"MultiRMSE"`, "multi-target"},
		{"multi-class loss", `"type":"RMSE"`, `"type":"MultiClassOneVsAll"`, "multi-class"},
		{"other loss", `"type":"RMSE"`, `"type":"Quantile"`, `loss "Quantile" is not one nicc reads`},
		{"no loss", `"loss_function":{"params":{},"type":"RMSE"}`, `"x":1`, "loss_function.type is missing"},
		{"two biases", `[0.25]`, `[0.25,0.5]`, "2 biases"},
		{"zero scale", `"scale_and_bias":[1,`, `"scale_and_bias":[0,`, "nonzero scale"},
		{"two outputs per leaf", `"leaf_values":[1,2,3,4]`, `"leaf_values":[1,2,3,4,5,6,7,8]`, "2 outputs per leaf"},
		{"leaf count", `"leaf_values":[1,2,3,4]`, `"leaf_values":[1,2,3]`, "3 leaf values; depth 2 needs 4"},
		{"border not the feature's", `"border":2,`, `"border":2.5,`, "border 2.5 is not among float feature 1's borders"},
		{"feature out of range", `"float_feature_index":1,`, `"float_feature_index":7,`, "float_feature_index 7 is out of range"},
		{"flat index", `"flat_feature_index":1`, `"flat_feature_index":3`, "flat_feature_index 3"},
		{"nan treatment", `"AsTrue"`, `"AsMaybe"`, `nan_value_treatment "AsMaybe"`},
		{"no trees", `"oblivious_trees":[{`, `"oblivious_trees":[],"x":[{`, "no oblivious_trees"},
		{"binary cbm", `{"features_info"`, "CBM1\x00{\"features_info\"", "binary .cbm format is not read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(tiny, c.from) {
				t.Fatalf("tiny has no %q", c.from)
			}
			_, err := Parse([]byte(strings.Replace(tiny, c.from, c.to, 1)))
			var pe *model.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v; want one line with %q", err, c.why)
			}
		})
	}
	deep := `{"features_info":{"float_features":[{"borders":[0]}]},"model_info":{"params":{"loss_function":{"type":"RMSE"}}},"oblivious_trees":[{"leaf_values":[],"splits":[` +
		strings.Repeat(`{"border":0,"float_feature_index":0,"split_type":"FloatFeature"},`, MaxDepth) +
		`{"border":0,"float_feature_index":0,"split_type":"FloatFeature"}]}]}`
	if _, err := Parse([]byte(deep)); err == nil || !strings.Contains(err.Error(), "depth 17") {
		t.Errorf("depth 17: %v", err)
	}
}

// TestFloat32Compare: CatBoost compares float32(x) with the float32 border, so a value above
// a border that rounds to it in float32 is not greater. Checked on a real model's border.
func TestFloat32Compare(t *testing.T) {
	m, err := Parse(testutil.LoadCatBoost(t, testdata, "single_tree").Model)
	if err != nil {
		t.Fatal(err)
	}
	root := m.Ensemble.Trees[0].Nodes[0]
	b := root.Threshold
	if float64(float32(b)) != b {
		t.Fatalf("border %v is not a float32", b)
	}
	above := math.Nextafter(b, math.Inf(1))
	if float32(above) != float32(b) || root.GoesLeft(above, m.Ensemble.SplitsFloat32()) {
		t.Errorf("x = %v just above border %v went to the x > border side", above, b)
	}
	if !root.GoesLeft(float64(math.Nextafter32(float32(b), 2*float32(math.Abs(b))+1)), m.Ensemble.SplitsFloat32()) {
		t.Errorf("the next float32 above border %v did not go to the x > border side", b)
	}
}

// A list longer than a model may have is refused before it is decoded, in one line, with at
// most twice the file allocated: 2 MiB of empty float features took 75 times the file
// (a 64 MiB file, 5 GB and an out-of-memory crash).
func TestParseRefusesLongListsEarly(t *testing.T) {
	const loss = `"model_info":{"params":{"loss_function":{"type":"RMSE"}}},`
	const feature = `"features_info":{"float_features":[{"feature_id":"a","borders":[0.5]}]},`
	split := `{"split_type":"FloatFeature","float_feature_index":0,"border":0.5}`
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty float features", modeltest.Repeat(`{`+loss+`"features_info":{"float_features":[`, `{}`, 2<<20/3, `]},"oblivious_trees":[]}`),
			"features_info.float_features: over 4096 entries"},
		{"empty trees", modeltest.Repeat(`{`+loss+feature+`"oblivious_trees":[`, `{}`, model.MaxTrees+1, `]}`),
			"oblivious_trees: over 65536 entries"},
		{"empty splits", modeltest.Repeat(`{`+loss+feature+`"oblivious_trees":[{"leaf_values":[0],"splits":[`, `{}`, model.MaxTrees*MaxDepth+1, `]}]}`),
			"oblivious_trees[].splits: over 1048576 entries"},
		{"splits of all trees together", modeltest.Repeat(`{`+loss+feature+`"oblivious_trees":[`, `{"splits":[`+strings.Repeat(`{},`, MaxDepth)+split+`]}`, model.MaxTrees, `]}`),
			"oblivious_trees[].splits: over 1048576 entries"},
		{"case-folded keys", modeltest.Repeat(`{`+loss+`"Features_Info":{"FLOAT_features":[`, `{}`, 5000, `]},"oblivious_trees":[]}`),
			"features_info.float_features: over 4096 entries"},
		{"escaped keys", modeltest.Repeat(`{`+loss+`"features_info":{"float_feature\u0073":[`, `{}`, 5000, `]},"oblivious_trees":[]}`),
			"features_info.float_features: over 4096 entries"},
	} {
		t.Run(c.name, func(t *testing.T) { modeltest.CheckRefusedSmall(t, c.data, Parse, c.want) })
	}
}
