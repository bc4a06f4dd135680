package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// authors is the trained network exported as its authors' code would (testdata/gen/authors.py):
// one unnamed input read oldest state first, (a_{t-2}, o_{t-1}, a_{t-1}, o_t).
const authors = models + "rlcc_authors.onnx"

// authorsOrder is its layout named explicitly.
const authorsOrder = "a_prev2,o_prev,a_prev,o"

// simFigures are the figures of nicc sim --json the done-means bar reads.
type simFigures struct {
	SU     float64 `json:"su_percent"`
	FR     float64 `json:"fr"`
	DR     float64 `json:"dr_gbps"`
	Layout struct {
		Given []string `json:"inputs_given"`
		Perm  []int    `json:"permutation"`
	} `json:"rlcc_layout"`
}

// controls asserts issue 26's bar: SU >= 95%, fairness >= 80, nothing dropped in the window.
func controls(t *testing.T, what string, r simFigures) {
	t.Helper()
	if r.SU < 95 || r.FR < 80 || r.DR != 0 {
		t.Errorf("%s: SU %.2f%%, FR %.1f, DR %v Gb/s; want SU >= 95, FR >= 80, DR 0", what, r.SU, r.FR, r.DR)
	}
	t.Logf("%s: SU %.2f%%, FR %.1f, DR %v", what, r.SU, r.FR, r.DR)
}

// The authors' oldest-first network compiles with one --inputs flag (explicit names, or the
// authors' generator), verifies, records its layout, and its teacher and its firmware control
// many-to-one 16 (20 ms) and 128 (100 ms: 20 ms is still settling at 128).
func TestAuthorsLayoutControlsCongestion(t *testing.T) {
	t.Parallel()
	named := authorsCompile(t, authorsOrder)
	gen := authorsCompile(t, "authors")
	for _, c := range []*compiled{named, gen} {
		if c.code != exitOK || !strings.Contains(c.stdout, "0 mismatches") || !strings.Contains(c.stdout, "reordered to the policy's a_prev,o,a_prev2,o_prev") {
			t.Fatalf("compile: exit %d\n%s%s", c.code, c.stdout, c.stderr)
		}
	}
	var rep struct {
		Layout struct {
			Given    []string `json:"inputs_given"`
			History  int      `json:"history"`
			Features []string `json:"features"`
			Perm     []int    `json:"permutation"`
		} `json:"rlcc_layout"`
	}
	b, err := os.ReadFile(filepath.Join(gen.dir, "report.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatal(err)
	}
	if l := rep.Layout; !reflect.DeepEqual(l.Given, []string{"action_prev", "adpg_reward_prev", "action", "adpg_reward"}) ||
		l.History != 2 || !reflect.DeepEqual(l.Features, []string{"action", "obs"}) || !reflect.DeepEqual(l.Perm, []int{2, 3, 0, 1}) {
		t.Errorf("report.json rlcc_layout %+v", l)
	}
	// diff --closed-loop loads the unnamed teacher with the layout the compile recorded.
	var diff struct {
		Pass bool `json:"pass"`
		Rows []struct {
			Teacher simFigures `json:"teacher"`
		} `json:"rows"`
	}
	jsonOf(t, &diff, "diff", authors, "--closed-loop", "--against", named.dir, "--runs", "many-to-one:16")
	if !diff.Pass || len(diff.Rows) != 1 {
		t.Fatalf("diff --closed-loop with the recorded layout: %+v", diff)
	}
	controls(t, "diff's teacher 16→1", diff.Rows[0].Teacher)
	code, _, stderr := nicc(t, "diff", authors, "--closed-loop", "--against", named.dir, "--runs", "many-to-one:16", "--inputs", "nicc")
	if code != exitBadInput || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "do not form the layout "+named.dir+" was compiled with") {
		t.Errorf("diff --closed-loop --inputs nicc against an authors'-order compile: exit %d %q", code, stderr)
	}
	for _, run := range []struct{ flows, duration string }{{"16", "20ms"}, {"128", "100ms"}} {
		var teacher, fw simFigures
		jsonOf(t, &teacher, "sim", "many-to-one", "--flows", run.flows, "--duration", run.duration, "--policy", authors, "--inputs", authorsOrder)
		controls(t, "teacher "+run.flows+"→1", teacher)
		jsonOf(t, &fw, "sim", "many-to-one", "--flows", run.flows, "--duration", run.duration, "--policy", named.dir)
		controls(t, "firmware "+run.flows+"→1", fw)
		if !reflect.DeepEqual(fw.Layout.Perm, []int{2, 3, 0, 1}) || !reflect.DeepEqual(teacher.Layout.Perm, fw.Layout.Perm) {
			t.Errorf("sim's rlcc_layout: teacher %+v, firmware %+v", teacher.Layout, fw.Layout)
		}
	}
}

// Fed in nicc's order, the same network does not control 16→1: the layout is what made it work.
func TestAuthorsNetworkInNiccOrderFails(t *testing.T) {
	t.Parallel()
	var r simFigures
	jsonOf(t, &r, "sim", "many-to-one", "--flows", "16", "--duration", "20ms", "--policy", authors, "--inputs", "nicc")
	if r.SU >= 95 && r.FR >= 80 && r.DR == 0 {
		t.Errorf("authors' network fed newest first: SU %.2f%%, FR %.1f, DR %v: it should not control congestion", r.SU, r.FR, r.DR)
	}
	t.Logf("fed newest first, 16→1: SU %.2f%%, FR %.1f, DR %v", r.SU, r.FR, r.DR)
	// The wrong explicit order still compiles (flagging it is the sanity probe's job).
	c := authorsCompile(t, "a_prev,o,a_prev2,o_prev")
	if c.code != exitOK || strings.Count(c.stderr, "\n") != 1 || !strings.Contains(c.stderr, "nicc: warning: sanity probe: model \"rlcc_authors\" raises the rate where congestion arrives") {
		t.Errorf("compile in the wrong order: exit %d, stderr %q; want it built, with the sanity probe's one warning", c.code, c.stderr)
	}
	for _, names := range []string{authorsOrder, "authors"} {
		if c := authorsCompile(t, names); strings.Contains(c.stderr, "sanity probe") {
			t.Errorf("--inputs %s: %q", names, c.stderr)
		}
	}
}

// An unnamed model under --handler auto is refused in one line naming the layouts accepted.
func TestUnnamedModelNamesTheLayouts(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"compile", authors, "--target", "int", "--out", filepath.Join(t.TempDir(), "o")},
		{"sim", "many-to-one", "--policy", authors},
	} {
		code, _, stderr := nicc(t, args...)
		if code == exitOK || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--inputs nicc") ||
			!strings.Contains(stderr, "--inputs authors [--history K --features LIST]") {
			t.Errorf("%v: exit %d, stderr %q; want one line naming the layouts", args, code, stderr)
		}
	}
}

// authorsCompile is the authors' network compiled --target int with --inputs inputs, shared
// (sharedCompile) with 2000 vectors, not the default 100000: every vector runs the whole
// handler in the layout, and the compile takes half the time.
func authorsCompile(t *testing.T, inputs string) *compiled {
	t.Helper()
	return sharedCompile(t, authors, "--target", "int", "--inputs", inputs, "--vectors", "2000")
}

// Layout errors are one line naming the name at fault; any layout the names form is fed.
func TestLayoutErrors(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "o")
	for inputs, want := range map[string]string{
		"a_prev,o,o_prev2,a_prev2":    "o_prev2 needs history 3, features action+obs (6 inputs), but o_prev is missing",
		"o,o_prev,obs,a_prev":         `inputs "o" and "obs" are both o`,
		"a_prev,o,cur_rate,rate_prev": "but a_prev2 is missing",
	} {
		code, _, stderr := nicc(t, "compile", authors, "--target", "int", "--inputs", inputs, "--out", out)
		if code == exitOK || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Errorf("--inputs %s: exit %d, %q; want one line with %q", inputs, code, stderr, want)
		}
	}
	// Layouts of other features and histories are fed (the network was not trained on them:
	// the sanity probe says so, and the compile is still exact).
	for inputs, want := range map[string]string{
		"action,adpg_reward,cur_rate,rtt_inflation": "history 1, features action+obs+infl+rate, inputs action,adpg_reward,cur_rate,rtt_inflation reordered",
		"o_prev3,o_prev2,o_prev,o":                  "history 4, features obs, inputs o_prev3,o_prev2,o_prev,o reordered",
	} {
		c := authorsCompile(t, inputs)
		if c.code != exitOK || !strings.Contains(c.stdout, want) || !strings.Contains(c.stdout, "0 mismatches") {
			t.Errorf("--inputs %s: exit %d, %s%s; want it verified with the layout line %q", inputs, c.code, c.stdout, c.stderr, want)
		}
	}
	code, _, stderr := nicc(t, "compile", authors, "--target", "int", "--inputs", "authors", "--history", "1", "--features", "action,adpg_reward,action_x", "--out", out)
	if code != exitBadInput || !strings.Contains(stderr, `feature "action_x" is not one the handler feeds`) {
		t.Errorf("bad --features: exit %d %q", code, stderr)
	}
	code, _, stderr = nicc(t, "compile", authors, "--target", "int", "--inputs", authorsOrder, "--history", "3", "--out", out)
	if code == exitOK || !strings.Contains(stderr, "--history and --features shape --inputs authors") {
		t.Errorf("--history with names: exit %d %q", code, stderr)
	}
}

// eval DIR takes rows as the model file orders its inputs (the authors' oldest first, for a
// compile of their network), by position or by the names it was compiled with, and gives the
// float network's y the framework gives on the same row.
func TestEvalDirTakesTheModelsOrder(t *testing.T) {
	t.Parallel()
	c := authorsCompile(t, authorsOrder)
	if c.code != exitOK {
		t.Fatalf("compile: exit %d %s", c.code, c.stderr)
	}
	dir := t.TempDir()
	row := "1.0,0.5,1.0,7.0\n" // a_{t-2}, o_{t-1}, a_{t-1}, o_t: congestion arrives
	want := ""
	for i, header := range []string{"input[0],input[1],input[2],input[3]\n", authorsOrder + "\n", "a_prev,o,a_prev2,o_prev\n"} {
		if i == 2 {
			row = "1.0,7.0,1.0,0.5\n" // the same state in the policy's order, by its names
		}
		f := filepath.Join(dir, fmt.Sprintf("rows%d.csv", i))
		if err := os.WriteFile(f, []byte(header+row), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := nicc(t, "eval", c.dir, "--input", f, "--json")
		if code != exitOK {
			t.Fatalf("eval %s: exit %d %s", header, code, stderr)
		}
		var out struct {
			Rows []struct {
				Float []float64 `json:"float"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Rows) != 1 || len(out.Rows[0].Float) != 1 {
			t.Fatalf("eval %s: %v %s", header, err, stdout)
		}
		if got := fmt.Sprint(out.Rows[0].Float[0]); want == "" {
			want = got
		} else if got != want {
			t.Errorf("header %q: float_y %s, want %s", header, got, want)
		}
	}
	if y, err := strconv.ParseFloat(want, 64); err != nil || y > -0.999 {
		t.Errorf("float y %s where congestion arrives; the network cuts hard there (-1)", want)
	}
}
