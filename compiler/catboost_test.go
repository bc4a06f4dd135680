package compiler

import (
	"math"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/catboost"
)

const catboostData = "../testdata/catboost"

// catboostFiles writes a CatBoost fixture's model and its rows with CatBoost's outputs (see
// testutil.CatBoostFixture.WriteFiles) into a temporary directory.
func catboostFiles(t *testing.T, name string) (*testutil.CatBoostFixture, *model.Model, string, string) {
	t.Helper()
	fx := testutil.LoadCatBoost(t, catboostData, name)
	m, err := catboost.Parse(fx.Model)
	if err != nil {
		t.Fatal(err)
	}
	path, csv := fx.WriteFiles(t, t.TempDir(), m.Inputs, m.Ensemble.Transform == model.TransformSigmoid)
	return fx, m, path, csv
}

// nicc compile --handler none on real CatBoost models (oblivious trees of depth 1, 2, 4 and
// 5, a NaN-separating border at +FLT_MAX): golden, host C and fwsim agree, the firmware is
// within 1e-5 of CatBoost's own predictions on its rows without a missing value, and the
// oblivious trees' table form is a candidate beside nested if/else.
func TestCompileCatBoost(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"kiwicom-xor", "single_tree", "shallow_trees", "nan_as_true"} {
		t.Run(name, func(t *testing.T) {
			fx, _, path, csv := catboostFiles(t, name)
			r, err := Compile(CompileOptions{Model: path, Handler: artifact.HandlerNone, Ranges: csv, Predictions: csv,
				Out: t.TempDir(), Vectors: 5000})
			if err != nil {
				t.Fatal(err)
			}
			missing := 0
			for _, row := range fx.Rows {
				if slices.ContainsFunc(row, math.IsNaN) {
					missing++
				}
			}
			if r.Verify.Mismatches != 0 || r.Verify.UBSan != "clean" || r.Tool == nil ||
				r.Tool.Rows+r.Tool.SkippedMissing != len(fx.Rows) || r.Tool.SkippedMissing != missing || r.Tool.Firmware.MaxAbs > 1e-5 {
				t.Errorf("verify %+v, vs CatBoost %+v", r.Verify, r.Tool)
			}
			forms := map[string]bool{}
			for _, fc := range r.Build.Candidates {
				forms[fc.Form] = true
			}
			if !forms["branch"] || !forms["table"] {
				t.Errorf("candidates %+v: want the branch and the table form of the oblivious trees", r.Build.Candidates)
			}
			t.Logf("%s: %d splits (%d folded), verify %d vectors, 0 mismatches; vs CatBoost %v over %d rows; WCET %d cycles in the %s form",
				r.Model.Name, r.Quant.Splits, r.Quant.Folded, r.Verify.Vectors, r.Tool.Firmware, r.Tool.Rows, r.Budget.WCETCycles, r.Build.Form)
		})
	}
}

// A real CatBoost model over 4 inputs compiles as an RL-CC policy (taken by position): its
// +FLT_MAX borders (nan_mode Max) on the clamped observation fold rather than being refused,
// and the handler verifies bit for bit.
func TestCompileCatBoostRLCC(t *testing.T) {
	t.Parallel()
	_, _, path, _ := catboostFiles(t, "nan_as_true")
	r, err := Compile(CompileOptions{Model: path, Handler: artifact.HandlerRLCC, Out: t.TempDir(), Vectors: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Handler != "rlcc" || r.Verify.Mismatches != 0 || r.Verify.UBSan != "clean" || r.Quant.Folded == 0 {
		t.Errorf("handler %s, verify %+v, %d splits folded", r.Handler, r.Verify, r.Quant.Folded)
	}
	t.Logf("%d splits (%d folded); nicc_on_event WCET %d cycles", r.Quant.Splits, r.Quant.Folded, r.Budget.WCETCycles)
}
