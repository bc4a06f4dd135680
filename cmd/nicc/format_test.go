package main

import (
	"os"
	"strings"
	"testing"
)

// TestAutoDetectNamesRefusedXGBoost gives --format auto real XGBoost 1.7 files it cannot read
// (testdata/gen/xgb_refused.py): each is refused by what it is, in one line, exit 2, under any
// file name; the same booster saved as JSON loads.
func TestAutoDetectNamesRefusedXGBoost(t *testing.T) {
	ubj, err := os.ReadFile(models + "xgb_small.ubj")
	if err != nil {
		t.Fatal(err)
	}
	ubjAsJSON := writeFile(t, "model.json", string(ubj))
	ubjNoExt := writeFile(t, "model", string(ubj))
	const ubjMsg = `: read as XGBoost (by its content): this is an XGBoost UBJSON model (save_model("*.ubj")); nicc reads XGBoost JSON: save it with save_model("model.json")` + "\n"
	const catMsg = ": tree 0 node 0: a categorical split on feature 1 (split_type 1); nicc reads numeric splits only: train without enable_categorical, or one-hot encode the feature\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", models + "xgb_small.ubj"}, models + "xgb_small.ubj" + ubjMsg},
		{[]string{"inspect", ubjAsJSON}, ubjAsJSON + ubjMsg},
		{[]string{"inspect", ubjNoExt}, ubjNoExt + ubjMsg},
		{[]string{"eval", models + "xgb_small.ubj", "--input", writeFile(t, "x.csv", "0.5,0.5\n")}, models + "xgb_small.ubj" + ubjMsg},
		{[]string{"compile", models + "xgb_small.ubj", "--handler", "none", "--out", t.TempDir()}, models + "xgb_small.ubj" + ubjMsg},
		{[]string{"inspect", models + "xgb_categorical.json"}, models + "xgb_categorical.json: read as XGBoost (by its content)" + catMsg},
		{[]string{"inspect", "--format", "xgboost", models + "xgb_categorical.json"}, models + "xgb_categorical.json: read as XGBoost (by --format xgboost)" + catMsg},
	} {
		code, stdout, stderr := nicc(t, c.args...)
		if code != exitBadInput || stdout != "" || stderr != "nicc: "+c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, "nicc: "+c.want)
		}
	}
	code, stdout, stderr := nicc(t, "inspect", models+"xgb_small.json")
	if code != exitOK || !strings.HasPrefix(stdout, "model    xgb_small (xgboost, ") {
		t.Errorf("xgb_small.json: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestAutoDetectReadsNaN: XGBoost writes NaN and Infinity as bare words in fields nicc's reader
// ignores; --format auto must still take the file for XGBoost and give the same outputs.
func TestAutoDetectReadsNaN(t *testing.T) {
	real, err := os.ReadFile(models + "rlcc_xgb.json")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(strings.Replace(string(real), `"base_weights":[`, `"base_weights":[NaN,`, 1), `"loss_changes":[`, `"loss_changes":[Infinity,`, 1)
	if edited == string(real) {
		t.Fatal("rlcc_xgb.json has no base_weights or loss_changes to edit")
	}
	path := writeFile(t, "rlcc_xgb.json", edited)
	rows := models + "rlcc_xgb.ref.csv"
	code, got, stderr := nicc(t, "eval", path, "--input", rows)
	_, want, _ := nicc(t, "eval", models+"rlcc_xgb.json", "--input", rows)
	if code != exitOK || got != want || want == "" {
		t.Errorf("exit %d, stderr %q; outputs equal to the original's: %v", code, stderr, got == want)
	}
	_, out, _ := nicc(t, "inspect", path)
	if !strings.Contains(out, "(xgboost, ") {
		t.Errorf("inspect does not name the format xgboost:\n%s", out)
	}
}
