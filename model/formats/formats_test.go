package formats_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model/formats"
)

// Every shipped model file is detected as it was before the registry (compiler's sniff):
// by extension for ONNX, by content for XGBoost and CatBoost, by extension or a JSON object for nicc JSON,
// by the first line for LightGBM.
func TestDetectShippedModels(t *testing.T) {
	for path, want := range map[string]string{
		"../../testdata/models/rlcc_teacher.onnx":             "onnx",
		"../../testdata/models/rlcc_teacher_unnamed.onnx":     "onnx",
		"../../testdata/models/rlcc_authors.onnx":             "onnx",
		"../../testdata/models/rlcc_lstm.onnx":                "onnx",
		"../../testdata/models/rlcc_lstm_batch_first.onnx":    "onnx",
		"../../testdata/models/ops_mix.onnx":                  "onnx",
		"../../testdata/models/bad_softmax.onnx":              "onnx",
		"../../testdata/models/rlcc_teacher.json":             "nicc",
		"../../testdata/models/rlcc_xgb.json":                 "xgboost",
		"../../testdata/models/xgb_dart.json":                 "xgboost",
		"../../testdata/models/xgb_logistic.json":             "xgboost",
		"../../testdata/models/xgb_small.json":                "xgboost",
		"../../testdata/models/xgb_categorical.json":          "xgboost",
		"../../testdata/models/xgb_small.ubj":                 "xgboost",
		"../../testdata/catboost/kiwicom-xor-model.json":      "catboost",
		"../../testdata/lightgbm/lg_dart_breast_cancer.model": "lightgbm",
		"../../testdata/lightgbm/lg_kddcup99.model":           "lightgbm",
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, why, err := formats.Detect(path, data)
		if err != nil || f.Name != want || why == "" {
			t.Errorf("%s: detected %v (%q), %v; want %s", path, f, why, err, want)
		}
	}
	if _, _, err := formats.Detect("x.bin", []byte("\x00\x01")); err == nil {
		t.Error("binary junk: detected a format")
	}
}

func TestLoadNamesFileAndFormat(t *testing.T) {
	m, f, err := formats.Load("../../testdata/models/rlcc_xgb.json", nil)
	if err != nil || f.Name != "xgboost" || m.Name == "" {
		t.Fatalf("load: %v, %v, %v", m, f, err)
	}
	path := "../../testdata/models/rlcc_teacher.json"
	for _, name := range []string{"onnx", "xgboost", "catboost", "lightgbm"} {
		f, err := formats.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = formats.Load(path, f)
		var le *formats.LoadError
		if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), path+": read as "+f.Title+" (by --format "+name+")") {
			t.Errorf("as %s: %v", name, err)
		}
	}
}

func TestLookupEveryName(t *testing.T) {
	for _, n := range formats.Names() {
		f, err := formats.Lookup(n)
		if err != nil || (n == formats.Auto) != (f == nil) || (f != nil && f.Name != n) {
			t.Errorf("Lookup(%q) = %v, %v", n, f, err)
		}
	}
	if _, err := formats.Lookup("h2o"); err == nil || !strings.Contains(err.Error(), "onnx") {
		t.Errorf("unknown name: %v", err)
	}
}

// The README's "Supported inputs" cannot be generated: it must name every registered format
// by its title, and its extensions.
func TestREADMEListsEveryFormat(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "### Supported inputs")
	if i < 0 {
		t.Fatal("README has no Supported inputs section")
	}
	section := readme[i:]
	if j := strings.Index(section[4:], "\n### "); j >= 0 {
		section = section[:j+4]
	}
	for _, f := range formats.All {
		if !strings.Contains(section, f.Title) {
			t.Errorf("README's Supported inputs does not name %s", f.Title)
		}
		for _, e := range f.Exts {
			if !strings.Contains(section, e) {
				t.Errorf("README's Supported inputs does not give %s's extension %s", f.Title, e)
			}
		}
	}
}

// FuzzDetect: detection takes any name and bytes without panicking, and whatever it picks,
// loading the bytes as that format either gives a model or an error.
func FuzzDetect(f *testing.F) {
	for _, p := range []string{"../../testdata/models/rlcc_xgb.json", "../../testdata/models/rlcc_teacher.json",
		"../../testdata/lightgbm/lg_dart_breast_cancer.model", "../../testdata/models/xgb_small.ubj",
		"../../testdata/catboost/kiwicom-xor-model.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p, b[:min(len(b), 4096)])
	}
	f.Add("x.onnx", []byte("\x08\x07"))
	f.Add("m.txt", []byte("tree\nversion=v3\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ff, why, err := formats.Detect(name, data)
		if err != nil {
			return
		}
		if ff == nil || why == "" {
			t.Fatalf("Detect(%q) = %v, %q with no error", name, ff, why)
		}
		if m, err := ff.Parse(data); err == nil && m == nil {
			t.Fatalf("%s parsed %q to no model and no error", ff.Name, name)
		}
	})
}
