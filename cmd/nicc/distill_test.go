package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDistillCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "student.json")
	code, stdout, stderr := nicc(t, "distill", models+"rlcc_teacher.json", "--trees", "4", "--depth", "3", "--samples", "5000", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr (no progress bar off a terminal): %q", stderr)
	}
	for label, want := range map[string]string{
		"states":   "states 5000 from the RL-CC sampler, grid rlcc",
		"student":  "student 4 trees of depth 3",
		"train":    "train RMSE 0.",
		"held-out": "held-out RMSE 0.",
		"time":     "time label ",
		"wrote":    "wrote " + out,
	} {
		if l := line(stdout, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q; output:\n%s", label, l, want, stdout)
		}
	}
	if !strings.Contains(line(stdout, "held-out"), "max abs") || !strings.Contains(line(stdout, "held-out"), "direction disagreement") {
		t.Errorf("held-out line: %q", line(stdout, "held-out"))
	}
	code, stdout, stderr = nicc(t, "inspect", out)
	if code != exitOK || !strings.Contains(stdout, "4 trees") {
		t.Errorf("inspect the student: exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, stderr = nicc(t, "distill", models+"rlcc_teacher.onnx", "--trees", "3", "--depth", "2", "--oblivious",
		"--samples", "3000", "--feature-weights", "1,1,0.5,0.5", "--out", out, "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var r struct {
		Trees     int  `json:"trees"`
		Oblivious bool `json:"oblivious"`
		HeldOut   struct {
			Rows     int     `json:"rows"`
			RMSE     float64 `json:"rmse"`
			Disagree float64 `json:"direction_disagreement"`
		} `json:"held_out"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Trees != 3 || !r.Oblivious || r.HeldOut.Rows != 300 || r.HeldOut.RMSE <= 0 {
		t.Errorf("--json: %+v (%v):\n%s", r, err, stdout)
	}
}

func TestDistillBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	teacher := models + "rlcc_teacher.json"
	out := filepath.Join(dir, "s.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{teacher, "--trees", "0", "--out", out}, "--trees 0: want at least 1"},
		{[]string{teacher, "--depth", "0", "--out", out}, "--depth 0: want at least 1"},
		{[]string{teacher, "--states", write("w.csv", "1,2\n3,4\n"), "--out", out}, "w.csv gives states of 2 values"},
		{[]string{teacher, "--states", write("e.csv", ""), "--out", out}, "e.csv: no data rows"},
		{[]string{teacher, "--states", write("m.csv", "1,2,3,4\n1,2,3\n"), "--out", out}, "m.csv: line 2: 3 values, want 4"},
		{[]string{teacher, "--feature-weights", "1,x", "--out", out}, `--feature-weights "1,x"`},
		{[]string{teacher, "--grid", "q8", "--out", out}, `--grid "q8"`},
		{[]string{teacher}, "distill needs --out"},
		{[]string{teacher, "--sweep", "trees=0..2", "--out", dir}, "want LO..HI[:STEP]"},
		{[]string{"--out", out}, "distill takes one TEACHER file, got 0 arguments"},
	} {
		code, _, stderr := nicc(t, append([]string{"distill"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
}

// nicc distill --sweep prints the table, the budget and the Pareto front and writes its files.
// Two configurations show all of that (lab's TestSweep checks the sweep itself over four).
func TestDistillSweepCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, stdout, stderr := nicc(t, "distill", models+"rlcc_teacher.json", "--sweep", "trees=2..4:2,depth=2",
		"--samples", "3000", "--num-vectors", "300", "--budget", "1500ns", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"budget 1.5 µs = 2700 cycles (1.8 GHz, 1 thread sharing)\n", // --budget, which the sweep lacked
		"trees depth  train RMSE  held RMSE  disagree      WCET     WCET   policy\n" +
			"                    (y)        (y)       (%)  (cycles)     (µs) (cycles)\n",
		"Pareto front (held-out RMSE vs WCET cycles):", "pareto", "sweep.svg"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	wantBadInput(t, "nicc: --budget applies to --sweep, which compiles; nicc distill alone builds nothing\n",
		"distill", models+"rlcc_teacher.json", "--out", filepath.Join(dir, "s.json"), "--budget", "1us")
	for _, f := range []string{"sweep.json", "sweep.png", "sweep.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// nicc compile --target trees distills the teacher and compiles the student, which verifies
// bit-exactly (golden == host C == fwsim). Both compiles pin --form walk: the test is about
// --target, not about which code form fit picks (the compiler's tests check that), and the
// choice builds every candidate form first.
func TestCompileTargetTrees(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_teacher.onnx", "--target", "trees", "--trees", "4", "--depth", "3",
		"--samples", "3000", "--out", out, "--vectors", "5000", "--form", "walk")
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	for label, want := range map[string]string{
		"student":  "student 4 trees of depth 3",
		"model":    filepath.Join(out, "student.json"),
		"verified": "golden == host C == fwsim, 0 mismatches; UBSan clean",
		"budget":   "fits",
	} {
		if l := line(stdout, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q; output:\n%s", label, l, want, stdout)
		}
	}
	code, _, stderr = nicc(t, "compile", models+"rlcc_teacher.onnx", "--target", "fp16", "--out", out)
	if code != exitBadInput || !strings.Contains(stderr, `--target "fp16"`) {
		t.Errorf("--target fp16: exit %d: %s", code, stderr)
	}
	// auto leaves a tree ensemble as it is (the small one: any ensemble shows it).
	code, stdout, stderr = nicc(t, "compile", models+"xgb_small.json", "--handler", "none", "--target", "auto", "--out", out, "--vectors", "2000", "--form", "walk")
	if code != exitOK || strings.Contains(stdout, "student ") {
		t.Errorf("--target auto on trees: exit %d: %s%s", code, stderr, stdout)
	}
}
