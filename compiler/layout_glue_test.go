package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/target/doca"
)

// A compile whose handler feeds another layout than the default (--inputs naming it, as
// a user does): a network of six inputs on a window of three states of
// (action, o) is quantized on the layout's grid, its entry defined by RLCC_DEFINE_HANDLER_L
// with the layout as constants, and verified bit-exactly (golden inside nicsdk.OnEventLayout
// == host C == UBSan == fwsim) on event sequences from the layout's contexts.
func TestCompileLayout(t *testing.T) {
	t.Parallel()
	l := nicsdk.Layout{History: 3, Features: 1<<nicsdk.FeatAction | 1<<nicsdk.FeatObs}
	model := testutil.TeacherWide(t, teacherJSON)
	r, dir := compileOnce(t, "layout-h3", CompileOptions{Model: model, Inputs: rlcc.LayoutNames(l), Int8: &golden.Int8Options{Samples: 5000}})
	if r == nil {
		t.Fatal("no report")
	}
	v := r.Verify
	if v.Mismatches != 0 || v.UBSan != "clean" || v.RTTEvents < 1000 || r.Budget.Verdict != "fits" {
		t.Errorf("verify %+v, budget %+v", v, r.Budget)
	}
	rg := nicsdk.RLCCInputRanges(nicsdk.DefaultParams(), l)
	if len(r.Inputs) != len(rg) {
		t.Fatalf("%d inputs, want %d", len(r.Inputs), len(rg))
	}
	for i, in := range r.Inputs {
		if in.Frac != 16 || in.Min != rg[i].Min || in.Max != rg[i].Max {
			t.Errorf("input %d: %+v, want the layout's range %+v", i, in, rg[i])
		}
	}
	h, err := os.ReadFile(filepath.Join(dir, artifact.HandlerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RLCC_DEFINE_HANDLER_L(nicc_params, nicc_policy_inline, RLCC_OUT_M, 3, RLCC_FEAT_ACTION | RLCC_FEAT_OBS)",
		"ctx->data[0..5] and ctx->data[10..11] (the input layout's older states: history 3, features action+obs)"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("%s lacks %q:\n%s", artifact.HandlerFile, want, h)
		}
	}
	t.Logf("history 3 of (a, o): WCET %d cycles, %d RTT events verified", r.Budget.WCETCycles, v.RTTEvents)

	// The DOCA program's runtime feeds the default layout only: refused, one line.
	_, err = Compile(CompileOptions{Model: model, Out: filepath.Join(t.TempDir(), "doca"), Handler: artifact.HandlerRLCC, SDK: doca.Target,
		Inputs: rlcc.LayoutNames(l), Int8: &golden.Int8Options{Samples: 2000}})
	if err == nil || !strings.Contains(err.Error(), "DOCA program feeds the default input layout") || strings.Contains(err.Error(), "\n") {
		t.Errorf("DOCA with history 3: %v", err)
	}
}
