package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// wrongOrderFile is rlcc_adpg.json with its first layer's columns swapped so that it reads
// (a_prev, o, a_prev2, o_prev) as (a_prev2, o_prev, a_prev, o): a network trained on the
// authors' oldest-first window, fed nicc's way. It is written once a package run, under
// sharedRoot, so that its compile is shared (intCompile); the tests only read it.
func wrongOrderFile(t *testing.T) string {
	t.Helper()
	wrongOrder.once.Do(func() { wrongOrder.path, wrongOrder.err = writeWrongOrder() })
	if wrongOrder.err != nil {
		t.Fatal(wrongOrder.err)
	}
	return wrongOrder.path
}

var wrongOrder struct {
	once sync.Once
	path string
	err  error
}

func writeWrongOrder() (string, error) {
	data, err := os.ReadFile(models + "rlcc_adpg.json")
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return "", err
	}
	for _, row := range m["layers"].([]any)[0].(map[string]any)["w"].([]any) {
		r := row.([]any)
		r[0], r[1], r[2], r[3] = r[2], r[3], r[0], r[1]
	}
	m["name"] = "rlcc_adpg_wrong_order"
	if data, err = json.Marshal(m); err != nil {
		return "", err
	}
	path := filepath.Join(sharedRoot, "wrong_order.json")
	return path, os.WriteFile(path, data, 0o644)
}

// intCompile is a network compiled --target int, checked with 500 vectors, shared
// (sharedCompile): TestSanityProbeWarning reads the summary and report.json of the wrong-order
// network's and rlcc_adpg.json's, TestClosedLoopUnhealthyTeacherCommand runs the wrong-order
// one in closed loop and TestDiffClosedLoopCLI rlcc_adpg.json's. None of them is about how
// many vectors verify compares.
func intCompile(t *testing.T, file string) *compiled {
	t.Helper()
	return sharedCompile(t, file, "--target", "int", "--vectors", "500")
}

const probeLine = `nicc: warning: sanity probe: model "rlcc_adpg_wrong_order" raises the rate where congestion arrives (x = a_prev 0.9, o 7.68, a_prev2 0.9, o_prev -0.768 gives multiplier 1.08`

// The sanity probe's one warning line at compile, sim, diff and inspect for the network fed
// its inputs in the wrong order, and its warnings list in each command's --json; none for the
// network itself.
func TestSanityProbeWarning(t *testing.T) {
	t.Parallel()
	wrong := wrongOrderFile(t)
	for _, args := range [][]string{
		{"inspect", "MODEL"},
		{"diff", "MODEL", "--samples", "200"},
		{"sim", "many-to-one", "--policy", "MODEL", "--duration", "2ms"},
		{"compile", "MODEL"}, // intCompile's: --target int --vectors 500
	} {
		for _, file := range []string{wrong, models + "rlcc_adpg.json"} {
			for _, asJSON := range []bool{false, true} {
				a := append([]string{}, args...)
				for i := range a {
					if a[i] == "MODEL" {
						a[i] = file
					}
				}
				var out string
				if asJSON && a[0] == "compile" {
					// The compile wrote report.json, which is what --json prints
					// (TestCompileJSON): a second compile would build the same again.
					b, err := os.ReadFile(filepath.Join(intCompile(t, file).dir, "report.json"))
					if err != nil {
						t.Fatal(err)
					}
					out = string(b)
				} else {
					if asJSON {
						a = append(a, "--json")
					}
					var code int
					var stdout, errOut string
					if a[0] == "compile" {
						c := intCompile(t, file)
						code, stdout, errOut = c.code, c.stdout, c.stderr
					} else {
						code, stdout, errOut = nicc(t, a...)
					}
					if code != exitOK {
						t.Fatalf("%v: exit %d\n%s", a, code, errOut)
					}
					if file == wrong && (!strings.HasPrefix(errOut, probeLine) || strings.Count(errOut, "\n") != 1) {
						t.Errorf("%v: stderr %q, want one line %q...", a, errOut, probeLine)
					}
					if file != wrong && errOut != "" {
						t.Errorf("%v: stderr %q, want nothing", a, errOut)
					}
					out = stdout
				}
				if !asJSON {
					continue
				}
				var r struct {
					Warnings []string `json:"warnings"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("%v: %v", a, err)
				}
				if want := map[bool]int{true: 1, false: 0}[file == wrong]; len(r.Warnings) != want || want == 1 && !strings.HasPrefix("nicc: warning: "+r.Warnings[0], probeLine) {
					t.Errorf("%v: warnings %q", a, r.Warnings)
				}
			}
		}
	}
}

// nicc sim prints the health line; --require-healthy turns an unhealthy run into exit 1;
// --json carries the verdict either way; bad limits are usage errors.
func TestSimHealthCommand(t *testing.T) {
	t.Parallel()
	wrong := wrongOrderFile(t)
	run := []string{"sim", "many-to-one", "--flows", "16", "--duration", "30ms", "--policy"}
	code, out, errOut := nicc(t, append(run, wrong)...)
	if code != exitOK || !strings.Contains(out, "health     FAIL: SU ") {
		t.Errorf("unhealthy run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = nicc(t, append(run, wrong, "--require-healthy", "--json")...)
	var r struct {
		Health struct {
			Healthy bool    `json:"healthy"`
			SU      float64 `json:"su_percent"`
			Why     string  `json:"why"`
		} `json:"health"`
	}
	if code != exitCheck || json.Unmarshal([]byte(out), &r) != nil || r.Health.Healthy || r.Health.SU >= 92 ||
		!strings.Contains(errOut, "nicc: unhealthy: many-to-one 16 does not control congestion here: SU ") {
		t.Errorf("--require-healthy: exit %d, %+v\n%s", code, r, errOut)
	}
	code, out, errOut = nicc(t, append(run, models+"rlcc_adpg.json", "--require-healthy")...)
	if code != exitOK || !strings.Contains(out, "health     ok: drops 0 Gb/s") || errOut != "" {
		t.Errorf("healthy run: exit %d\n%s%s", code, out, errOut)
	}
	// The floor is the user's: at 99% the healthy run at 16 flows fails.
	if code, _, _ = nicc(t, append(run, models+"rlcc_adpg.json", "--require-healthy", "--min-su", "99")...); code != exitCheck {
		t.Errorf("--min-su 99: exit %d", code)
	}
	for _, c := range []struct{ args []string }{
		{append(run, "swift", "--max-eq2-ratio", "0")},
		{append(run, "swift", "--min-su", "101")},
		{append(run, "swift", "--max-drop-gbps", "-1")},
		{[]string{"diff", models + "rlcc_adpg.json", "--min-su", "90"}},
	} {
		code, _, errOut := nicc(t, c.args...)
		if code != exitBadInput || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut)
		}
	}
}

// diff --closed-loop where the teacher drops terabits (the 512 flows): the scenario
// fails, exit 1, saying the teacher does not control congestion; --json carries each side's
// health.
func TestClosedLoopUnhealthyTeacherCommand(t *testing.T) {
	t.Parallel()
	wrong := wrongOrderFile(t)
	c := intCompile(t, wrong) // TestSanityProbeWarning checks this compile
	if c.code != exitOK {
		t.Fatalf("compile: exit %d: %s", c.code, c.stderr)
	}
	dir := c.dir
	code, out, errOut := nicc(t, "diff", wrong, "--closed-loop", "--against", dir, "--golden", "--runs", "many-to-one:512", "--duration", "10ms", "--json")
	var r struct {
		Pass bool `json:"pass"`
		Rows []struct {
			Pass          bool    `json:"pass"`
			Why           string  `json:"why"`
			GoodputDiff   float64 `json:"goodput_diff"`
			TeacherHealth struct {
				Healthy  bool    `json:"healthy"`
				DropGbps float64 `json:"dr_gbps"`
			} `json:"teacher_health"`
			CompiledHealth struct {
				Healthy bool `json:"healthy"`
			} `json:"compiled_health"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Rows) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	row := r.Rows[0]
	if code != exitCheck || r.Pass || row.Pass || row.TeacherHealth.Healthy || row.CompiledHealth.Healthy || row.TeacherHealth.DropGbps < 1000 ||
		!strings.HasPrefix(row.Why, "the teacher does not control congestion here (drops ") ||
		!strings.Contains(errOut, "the teacher does not control congestion in many-to-one:512, where the comparison says nothing") {
		t.Errorf("exit %d, %+v\n%s", code, r, errOut)
	}
}
