package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
)

// save writes m into a temporary directory.
func save(t *testing.T, m *model.Model) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), m.Name+".json")
	if err := model.Save(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}

// A model that cannot fit is refused before anything is built: exit 1 (a failed check, as
// over budget is) with the numbers on one line, and nothing in --out.
func TestCompileRefusesWhatCannotFit(t *testing.T) {
	var calib strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		fmt.Fprintf(&calib, "%g,%g,%g,%g\n", 0.8+0.4*rng.Float64(), 10*rng.Float64()-1, 0.8+0.4*rng.Float64(), 10*rng.Float64()-1)
	}
	calibFile := filepath.Join(t.TempDir(), "calib.csv")
	if err := os.WriteFile(calibFile, []byte(calib.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mlp := save(t, modeltest.MLP("mlp", modeltest.RLCCInputs, []int{4, 256, 256, 64, 1}, 1))
	trees := save(t, modeltest.Trees("forest", modeltest.RLCCInputs, 40, 8, 1))
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"budget", []string{models + "rlcc_xgb.json", "--handler", "none", "--budget", "2ns"}, []string{
			"nicc: " + models + "rlcc_xgb.json: model rlcc_xgb needs at least 5 cycles (the rank form: a compare for each of 4 features and a table add, at least 1 cycle(s) each) = 0.003 µs on dpa, over the 0.002 µs budget (3 cycles); --force builds it anyway\n"}},
		// 100 ns is 0.1 µs as written: it printed 0.09999999999999999 (issue 26).
		{"budget 100ns", []string{models + "rlcc_teacher.json", "--target", "int", "--budget", "100ns"}, []string{
			"nicc: " + models + "rlcc_teacher.json: model rlcc_teacher needs at least 229 cycles (204 nonzero weights and 25 channels, at least 1 cycle(s) each) = 0.127 µs on dpa, over the 0.1 µs budget (180 cycles); --force builds it anyway\n"}},
		// 83,008 multiply-accumulates, a few of them zero in int8.
		{"int8 MLP 4→256→256→64→1", []string{mlp, "--target", "int8", "--handler", "none", "--calib", calibFile, "--weight-bits", "8", "--act-bits", "8"}, []string{
			"nicc: " + mlp + ": model mlp needs at least ", " nonzero weights and ", " channels, at least 1 cycle(s) each) = ",
			" µs on dpa, over the 2 µs budget (3,600 cycles); --force builds it anyway\n"}},
		{"memory", []string{trees, "--handler", "none", "--core", "sifive-e31"}, []string{
			"bytes of code and tables (20,379 distinct splits and leaves, at least 2 bytes each), over the 32,768 bytes of sifive-e31's memory (assumed; nicc budget --list-cores); --force builds it anyway\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := nicc(t, append([]string{"compile", "--out", out}, c.args...)...)
			if code != exitCheck || stdout != "" || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one line", code, stdout, stderr, exitCheck)
			}
			for _, want := range c.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("refused, yet %s was made", out)
			}
		})
	}
}

// --force builds it anyway: the whole pipeline runs, and then it is over budget. --form
// branch builds nested if/else, which the choice by cost would not.
func TestCompileForce(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_xgb.json", "--out", out, "--handler", "none", "--budget", "2ns", "--force", "--vectors", "1000", "--form", "branch")
	if code != exitCheck || !strings.Contains(stderr, "nicc_policy is over budget on dpa") {
		t.Fatalf("exit %d, stderr %q; want exit 1, over budget", code, stderr)
	}
	for label, want := range map[string]string{
		"note":     "note built with --force: it needs at least 5 cycles",
		"verified": "golden == host C == fwsim, 0 mismatches; UBSan clean",
		"built":    "built branch form, gcc -O2 (141 splits, at most 512: nested if/else at -O2)",
	} {
		if l := line(stdout, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q", label, l, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "firmware.elf")); err != nil {
		t.Error(err)
	}
}

func TestDistillForceNeedsSweep(t *testing.T) {
	code, _, stderr := nicc(t, "distill", models+"rlcc_teacher.json", "--out", filepath.Join(t.TempDir(), "s.json"), "--force", "--samples", "100")
	if code != exitBadInput || stderr != "nicc: --force applies to --sweep, which compiles; nicc distill alone builds nothing\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
