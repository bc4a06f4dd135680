package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// failedReport is the part of report.json a failed compile fills.
type failedReport struct {
	Failure *struct {
		Stage    string `json:"stage"`
		Kind     string `json:"kind"`
		Message  string `json:"message"`
		Mismatch *struct {
			Entry  string  `json:"entry"`
			Vector int     `json:"vector"`
			Kind   string  `json:"kind"`
			X      []int32 `json:"x"`
			Golden struct {
				Return int64 `json:"return"`
			} `json:"golden"`
			Host struct {
				Return int64 `json:"return"`
			} `json:"host_c"`
			UBSan struct {
				Return int64 `json:"return"`
			} `json:"host_c_ubsan"`
			Fwsim struct {
				Return int64 `json:"return"`
			} `json:"fwsim"`
		} `json:"mismatch"`
	} `json:"failure"`
	Firmware string   `json:"firmware"`
	Host     []string `json:"host"`
	Verify   struct {
		Mismatches int    `json:"mismatches"`
		UBSan      string `json:"ubsan"`
	} `json:"verify"`
	Budget *struct {
		Fits bool `json:"fits"`
	} `json:"budget"`
	Times []struct {
		Stage   string  `json:"stage"`
		Seconds float64 `json:"seconds"`
	} `json:"stage_times"`
}

func (r *failedReport) stages() []string {
	var s []string
	for _, t := range r.Times {
		s = append(s, t.Stage)
	}
	return s
}

// readFailedReport reads dir's report.json, which must equal the --json output when one is
// given.
func readFailedReport(t *testing.T, dir, jsonOut string) *failedReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("no report.json after a failed check: %v", err)
	}
	if jsonOut != "" && strings.TrimSpace(jsonOut) != strings.TrimSpace(string(b)) {
		t.Errorf("--json printed something else than report.json:\n%s", jsonOut)
	}
	var r failedReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Failure == nil {
		t.Fatalf("report.json has no failure:\n%s", b)
	}
	return &r
}

// tamperedGCC puts a gcc first on PATH that builds the host drivers from a copy of
// nicc_policy.c edited by the sed script: golden and fwsim keep the code nicc verified.
func tamperedGCC(t *testing.T, sed string) {
	real, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := `#!/bin/sh
for a do
	shift
	case $a in
	*/nicc_policy.c)
		c=$(mktemp -p '` + bin + `' XXXXXX.c)
		sed -e '` + sed + `' "$a" > "$c"
		a=$c
		;;
	esac
	set -- "$@" "$a"
done
exec '` + real + `' "$@"
`
	if err := os.WriteFile(filepath.Join(bin, "gcc"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// A host build that takes a threshold's other branch at x == T: compile exits 1 with one
// line on stderr, prints the summary with the failure, and writes report.json with the first
// differing vector and the outputs; --json prints that report.
func TestCompileMismatchWritesReport(t *testing.T) {
	tamperedGCC(t, `0,/ <= [0-9]/s/ <= \([0-9]\)/ < \1/`)
	args := []string{"compile", models + "rlcc_xgb.json", "--handler", "none", "--vectors", "2000", "--form", "branch"}
	out := t.TempDir()
	code, stdout, stderr := nicc(t, append(args, "--out", out)...)
	if code != exitCheck {
		t.Fatalf("exit %d, want %d: %s", code, exitCheck, stderr)
	}
	if !regexp.MustCompile(`^nicc: verify: \d+ of \d+ vectors differ; the first: nicc_policy\(x\) on vector \d+ \(threshold±1, tree \d+ node \d+: \w+ <= -?\d+\), x = \[[-\d ]+\]: golden -?\d+, host C -?\d+, host C with UBSan -?\d+, fwsim -?\d+\n$`).MatchString(stderr) {
		t.Errorf("stderr %q", stderr)
	}
	if !strings.HasPrefix(line(stdout, "verified"), "verified 2000 vectors: golden, host C and fwsim DIFFER on ") ||
		!strings.HasPrefix(line(stdout, "FAILED"), "FAILED verify (mismatch): verify: ") || line(stdout, "WCET") != "" {
		t.Errorf("summary:\n%s", stdout)
	}
	r := readFailedReport(t, out, "")
	f := r.Failure
	m := f.Mismatch
	if f.Stage != "verify" || f.Kind != "mismatch" || "nicc: "+f.Message+"\n" != stderr || m == nil {
		t.Fatalf("failure %+v", f)
	}
	if m.Entry != "nicc_policy" || m.Vector < 1 || m.Kind != "threshold±1" || len(m.X) != 4 ||
		m.Golden.Return != m.Fwsim.Return || m.Host.Return == m.Golden.Return || m.UBSan.Return != m.Host.Return {
		t.Errorf("mismatch %+v: want golden == fwsim != host C == UBSan", *m)
	}
	if r.Verify.Mismatches < 1 || r.Budget != nil || r.Firmware != "firmware.elf" || len(r.Host) != 3 ||
		!slices.Equal(r.stages(), []string{"load", "quantize", "fit", "emit", "build", "verify", "report"}) {
		t.Errorf("report %+v", r)
	}

	out = t.TempDir()
	code, stdout, stderr = nicc(t, append(args, "--out", out, "--json")...)
	if code != exitCheck || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("--json: exit %d, stderr %q", code, stderr)
	}
	if r := readFailedReport(t, out, stdout); r.Failure.Kind != "mismatch" {
		t.Errorf("--json: failure %+v", r.Failure)
	}
}

// Undefined behaviour in the host build: exit 1 and a report whose failure is ubsan. One
// form (--form): the fault is the host build's, whichever form it is, so the walk form, which
// builds in half the time of the mismatch test's branch form (the sed puts the overflow after
// nicc_policy's opening brace, in either form).
func TestCompileUBSanWritesReport(t *testing.T) {
	tamperedGCC(t, `0,/^{$/s/^{$/{ volatile int32_t ub = INT32_MAX; ub += (x[0] > 0);/`)
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_xgb.json", "--handler", "none", "--vectors", "2000", "--form", "walk", "--out", out, "--json")
	if code != exitCheck || !strings.HasPrefix(stderr, "nicc: verify: the UBSan host build did not run clean: ") ||
		!strings.Contains(stderr, "signed integer overflow") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	r := readFailedReport(t, out, stdout)
	if f := r.Failure; f.Stage != "verify" || f.Kind != "ubsan" || f.Mismatch != nil || r.Verify.UBSan != "not clean" {
		t.Errorf("failure %+v, verify %+v", f, r.Verify)
	}
}

// Every stage's time is in --json, and the summary has a line of them; the wrote line names
// host/ and what is in it.
func TestCompileTimesAndWroteLines(t *testing.T) {
	t.Parallel()
	c := rlccXGB(t)
	out, stdout := c.dir, c.stdout
	if !regexp.MustCompile(`(?m)^times +load [\d.]+ m?s, quantize [\d.]+ m?s, fit [\d.]+ m?s, emit [\d.]+ m?s, build [\d.]+ m?s, verify [\d.]+ m?s, budget [\d.]+ m?s, report [\d.]+ m?s; total [\d.]+ m?s$`).MatchString(stdout) {
		t.Errorf("no times line:\n%s", stdout)
	}
	wrote := "wrote " + out + ": handler.c, link.ld, nicc_policy.c, nicc_policy.h, nicsdk.h, rlcc.h, vectors.txt, vectors_policy.txt, firmware.elf, report.json"
	host := filepath.Join(out, "host") + "/: driver.c, driver, driver-ubsan (the verification driver and its strict and UBSan host builds)"
	if line(stdout, "wrote") != wrote || !strings.Contains(stdout, "\n           "+host+"\n") {
		t.Errorf("wrote lines, want %q and %q:\n%s", wrote, host, stdout)
	}
	for _, f := range []string{"driver.c", "driver", "driver-ubsan"} {
		if _, err := os.Stat(filepath.Join(out, "host", f)); err != nil {
			t.Errorf("the wrote line names host/%s: %v", f, err)
		}
	}
	// report.json is what --json prints (TestCompileJSON).
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	var r failedReport
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("report.json: %v", err)
	}
	if want := []string{"load", "quantize", "fit", "emit", "build", "verify", "budget", "report"}; !slices.Equal(r.stages(), want) || r.Times[4].Seconds <= 0 || r.Failure != nil {
		t.Errorf("--json stage_times %+v, failure %v", r.Times, r.Failure)
	}
	if !slices.Equal(r.Host, []string{"host/driver.c", "host/driver", "host/driver-ubsan"}) {
		t.Errorf("--json host %v", r.Host)
	}
}
