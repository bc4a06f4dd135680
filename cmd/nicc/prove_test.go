package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// proveJSON is what nicc prove --json prints, as far as the tests read it.
type proveJSON struct {
	Results []struct {
		Property       string  `json:"property"`
		Verdict        string  `json:"verdict"`
		Method         string  `json:"method"`
		ProvenShare    float64 `json:"proven_share"`
		Counterexample *struct {
			Rows     [][]float64 `json:"rows"`
			Golden   []uint32    `json:"golden_m_q16"`
			Firmware []uint32    `json:"firmware_m_q16"`
		} `json:"counterexample"`
	} `json:"results"`
}

func runProveJSON(t *testing.T, args ...string) (int, proveJSON) {
	t.Helper()
	code, out, stderr := nicc(t, append([]string{"prove", "--json"}, args...)...)
	var r proveJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("nicc prove %v: exit %d, %v\n%s%s", args, code, err, out, stderr)
	}
	return code, r
}

// The authors' network fed in the wrong order (--inputs nicc) raises the rate deep in
// congestion: prove refutes cuts-when-congested with a counterexample the firmware in fwsim
// confirms and nicc eval DIR --input reproduces. Fed in its order, the result is reported.
func TestProveWrongInputOrder(t *testing.T) {
	t.Parallel()
	wrong := authorsCompile(t, "nicc")
	if wrong.code != 0 {
		t.Fatalf("compile: %s", wrong.stderr)
	}
	out := t.TempDir()
	code, r := runProveJSON(t, wrong.dir, "--property", "cuts-when-congested", "--out", out)
	res := r.Results[0]
	if code != exitCheck || res.Verdict != "refuted" || res.Counterexample == nil || len(res.Counterexample.Firmware) != 1 ||
		res.Counterexample.Firmware[0] != res.Counterexample.Golden[0] || res.Counterexample.Golden[0] <= 65536 {
		t.Fatalf("exit %d, %+v: want refuted, the firmware's multiplier over 1 and the golden model's", code, res)
	}
	code, stdout, stderr := nicc(t, "eval", wrong.dir, "--input", filepath.Join(out, "cuts-when-congested_1.csv"), "--json")
	var ev struct {
		Rows []struct {
			Golden   int64 `json:"golden_raw"`
			Firmware int64 `json:"firmware_raw"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &ev); err != nil || code != 0 || len(ev.Rows) != 1 ||
		ev.Rows[0].Golden != int64(res.Counterexample.Golden[0]) || ev.Rows[0].Firmware != ev.Rows[0].Golden {
		t.Fatalf("nicc eval on the counterexample: exit %d, %v, %s%s; want the multiplier %d from both", code, err, stdout, stderr, res.Counterexample.Golden[0])
	}

	right := authorsCompile(t, "authors")
	if right.code != 0 {
		t.Fatalf("compile: %s", right.stderr)
	}
	_, r = runProveJSON(t, right.dir, "--property", "cuts-when-congested", "--search-time", "1s")
	if res := r.Results[0]; res.Verdict == "refuted" || res.ProvenShare < 0.5 {
		t.Errorf("in its order: %+v; want no counterexample and most of the region proven", res)
	}
	t.Logf("in its order: %s, %.2f%% proven (%s)", r.Results[0].Verdict, 100*r.Results[0].ProvenShare, r.Results[0].Method)
}

// The shipped trees: every property decided, as the text and --json say.
func TestProveTrees(t *testing.T) {
	t.Parallel()
	c := rlccXGB(t)
	code, r := runProveJSON(t, c.dir)
	want := map[string]string{"cuts-when-congested:1": "proven", "raises-when-idle:1": "proven", "monotone-in-o": "refuted", "bounded-step": "proven", "rate-in-range": "proven"}
	if code != exitCheck || len(r.Results) != len(want) {
		t.Fatalf("exit %d, %d results", code, len(r.Results))
	}
	for _, res := range r.Results {
		if want[res.Property] != res.Verdict || !strings.Contains(res.Method, "exact") && res.Property != "rate-in-range" {
			t.Errorf("%s: %s (%s), want %s, exactly", res.Property, res.Verdict, res.Method, want[res.Property])
		}
	}
	code, stdout, _ := nicc(t, "prove", c.dir, "--property", "cuts-when-congested:2", "--property", "bounded-step:0.5..1.5")
	if code != exitOK || !strings.Contains(stdout, "cuts-when-congested:2  PROVEN") || !strings.Contains(stdout, "bounded-step:0.5..1.5  PROVEN") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

func TestProveRefuses(t *testing.T) {
	t.Parallel()
	c := rlccXGB(t)
	notDir := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{c.dir, "--property", "fast"}, {c.dir, "--property", "cuts-when-congested:-1"}, {c.dir, "--search-time", "0s"},
		{c.dir, "--search-time", "2h"}, {notDir}, {}, {c.dir, c.dir},
	} {
		code, _, stderr := nicc(t, append([]string{"prove"}, args...)...)
		if code != exitBadInput || strings.Count(stderr, "\n") != 1 {
			t.Errorf("prove %v: exit %d, stderr %q; want 2 and one line", args, code, stderr)
		}
	}
}

// compile --require proves the properties after the budget: one not proven fails the compile
// (exit 1), and report.json says which, with the proof.
func TestCompileRequire(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "o")
	code, _, stderr := nicc(t, "compile", models+"rlcc_xgb.json", "--out", out, "--num-vectors", "500", "--require", "cuts-when-congested,monotone-in-o")
	if code != exitCheck || !strings.Contains(stderr, "--require: monotone-in-o is refuted") {
		t.Fatalf("exit %d, stderr %q; want 1 naming monotone-in-o", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Failure   struct{ Stage, Kind string } `json:"failure"`
		proveJSON `json:"prove"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Failure.Stage != "prove" || r.Failure.Kind != "property" || len(r.Results) != 2 ||
		r.Results[0].Verdict != "proven" || r.Results[1].Verdict != "refuted" || r.Results[1].Counterexample == nil {
		t.Fatalf("report.json: %v, %+v", err, r)
	}
}
