package compiler

import (
	"strings"
	"testing"
)

func TestLoadModelTellsFormats(t *testing.T) {
	cases := map[string]Format{
		"../testdata/models/rlcc_teacher.onnx":             FormatONNX,
		"../testdata/models/rlcc_teacher.json":             FormatNative,
		"../testdata/models/rlcc_xgb.json":                 FormatXGBoost,
		"../testdata/lightgbm/lg_dart_breast_cancer.model": FormatLightGBM,
	}
	for path, want := range cases {
		m, got, err := LoadModel(path, FormatAuto)
		if err != nil || got != want {
			t.Errorf("%s: format %s, error %v; want %s", path, got, err, want)
			continue
		}
		if m.Name == "" {
			t.Errorf("%s: model has no name", path)
		}
	}
}

func TestLoadModelForcedFormatNamesFile(t *testing.T) {
	path := "../testdata/models/rlcc_teacher.json"
	for _, f := range []Format{FormatONNX, FormatXGBoost, FormatLightGBM} {
		_, _, err := LoadModel(path, f)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("as %s: error %v, want one naming %s", f, err, path)
		}
	}
}

func TestFormatNamesParse(t *testing.T) {
	for i := FormatAuto; i < formatEnd; i++ {
		f, err := ParseFormat(i.String())
		if err != nil || f != i {
			t.Errorf("ParseFormat(%q) = %v, %v", i.String(), f, err)
		}
	}
}
