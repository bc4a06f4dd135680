package testutil

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// CatBoostFixture is one CatBoost model of testdata/catboost with the rows CatBoost predicted
// and its predictions, all as CatBoost wrote them (see testdata/catboost/README).
type CatBoostFixture struct {
	Name  string
	Model []byte      // the JSON model, decompressed
	Rows  [][]float64 // NaN where the file has null
	Want  []float64
	// Kind is what Want holds: "raw" (RawFormulaVal), "Probability" or "Exponent" (exp of the
	// raw value).
	Kind string
}

// CatBoostConforming are the fixtures nicc reads and matches; CatBoostRefused maps each
// fixture nicc refuses to a phrase its error holds.
var (
	CatBoostConforming = []string{"kiwicom-xor", "kiwicom-regression", "float_binary", "float_regression",
		"single_tree", "shallow_trees", "deep_trees", "many_borders", "extreme_values", "large_features",
		"nan_as_false", "nan_as_true"}
	CatBoostRefused = map[string]string{
		"nonsym_binary":    "non-symmetric",
		"multiclass_3":     "multi-class",
		"ctr_binary":       "CTR features",
		"cat_onehot_small": "categorical features",
	}
)

// LoadCatBoost reads a fixture from dir (testdata/catboost): kiwicom-NAME-model.json with
// kiwicom-NAME.json ({"x", "y"}), or NAME_model.json.gz with NAME_test.json ({"samples",
// "predictions"}).
func LoadCatBoost(t testing.TB, dir, name string) *CatBoostFixture {
	t.Helper()
	fx := &CatBoostFixture{Name: name, Kind: "raw"}
	if strings.HasPrefix(name, "kiwicom-") {
		fx.Model = readFile(t, filepath.Join(dir, name+"-model.json"))
		var ref struct {
			X [][]float64
			Y []float64
		}
		if err := json.Unmarshal(readFile(t, filepath.Join(dir, name+".json")), &ref); err != nil {
			t.Fatal(err)
		}
		fx.Rows, fx.Want = ref.X, ref.Y
		return fx
	}
	zr, err := gzip.NewReader(bytes.NewReader(readFile(t, filepath.Join(dir, name+"_model.json.gz"))))
	if err != nil {
		t.Fatal(err)
	}
	if fx.Model, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Samples []struct {
			Floats []*float64 `json:"floats"`
		} `json:"samples"`
		Predictions    [][]float64 `json:"predictions"`
		PredictionType string      `json:"prediction_type"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, name+"_test.json")), &ref); err != nil {
		t.Fatal(err)
	}
	if ref.PredictionType != "" {
		fx.Kind = ref.PredictionType
	}
	for i, s := range ref.Samples {
		row := make([]float64, len(s.Floats))
		for j, v := range s.Floats {
			row[j] = math.NaN()
			if v != nil {
				row[j] = *v
			}
		}
		fx.Rows = append(fx.Rows, row)
		fx.Want = append(fx.Want, ref.Predictions[i][0])
	}
	return fx
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Raw is CatBoost's raw value (RawFormulaVal) on row i.
func (fx *CatBoostFixture) Raw(i int) float64 {
	switch fx.Kind {
	case "Probability":
		return math.Log(fx.Want[i] / (1 - fx.Want[i]))
	case "Exponent":
		return math.Log(fx.Want[i])
	}
	return fx.Want[i]
}

// Output is CatBoost's prediction on row i in the model's own output: the probability when
// sigmoid (a Logloss or CrossEntropy model), else the raw value.
func (fx *CatBoostFixture) Output(i int, sigmoid bool) float64 {
	switch {
	case fx.Kind == "Probability":
		return fx.Want[i]
	case sigmoid:
		return 1 / (1 + math.Exp(-fx.Raw(i)))
	}
	return fx.Raw(i)
}

// WriteFiles writes the decompressed model, and a CSV of the rows (NaN for a missing value)
// under a header of the model's input names with CatBoost's output last (Output, column
// "catboost"), into dir; it returns their paths.
func (fx *CatBoostFixture) WriteFiles(t testing.TB, dir string, inputs []string, sigmoid bool) (modelPath, csvPath string) {
	t.Helper()
	modelPath, csvPath = filepath.Join(dir, fx.Name+".json"), filepath.Join(dir, fx.Name+".csv")
	var b strings.Builder
	b.WriteString(strings.Join(inputs, ",") + ",catboost\n")
	for i, row := range fx.Rows {
		for _, v := range row {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
		}
		b.WriteString(strconv.FormatFloat(fx.Output(i, sigmoid), 'g', -1, 64) + "\n")
	}
	if err := os.WriteFile(modelPath, fx.Model, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return modelPath, csvPath
}
