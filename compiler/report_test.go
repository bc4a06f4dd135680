package compiler

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/nicsdk"
)

// readReport reads report.json from dir.
func readReport(t *testing.T, dir string) *artifact.CompileReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, artifact.ReportFile))
	if err != nil {
		t.Fatalf("a failed compile writes its report: %v", err)
	}
	var r artifact.CompileReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func stageNames(r *artifact.CompileReport) []string {
	var names []string
	for _, s := range r.Times {
		names = append(names, s.Stage)
	}
	return names
}

// A threshold off by one in the C is a mismatch on a policy vector: report.json is written
// with the failure, the first differing vector and each implementation's output, and the
// stages before verify.
func TestCompileMismatchWritesReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	re := regexp.MustCompile(`\{\{(-?\d{1,9})\}, \{UINT64_C`) // the first finite threshold of a rank table
	r, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Vectors: 2000, Form: "rank",
		tamper: tamperFirst(t, "nicc_policy.c", re, func(m []string) string {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return "{{" + strconv.FormatInt(n+1, 10) + "}, {UINT64_C"
		})})
	var ce *budget.CheckError
	if !errors.As(err, &ce) || r == nil {
		t.Fatalf("got %v, report %v; want a budget.CheckError and the report", err, r)
	}
	got := readReport(t, dir)
	f := got.Failure
	if f == nil || f.Stage != "verify" || f.Kind != "mismatch" || f.Message != err.Error() {
		t.Fatalf("failure %+v, error %v", f, err)
	}
	m := f.Mismatch
	if m == nil || m.Entry != artifact.EntryPolicy || m.Vector < 1 || m.Kind != artifact.VecThreshold.String() || len(m.X) != 4 || m.In != nil ||
		!regexp.MustCompile(`^tree \d+ node \d+: \w+ <= -?\d+$`).MatchString(m.Split) {
		t.Fatalf("mismatch %+v", m)
	}
	if m.Golden.Return == m.Fwsim.Return || m.Host.Return != m.Fwsim.Return || m.UBSan.Return != m.Fwsim.Return {
		t.Errorf("outputs: golden %+v, host C %+v, UBSan %+v, fwsim %+v; want the three C builds alike, unlike golden", m.Golden, m.Host, m.UBSan, m.Fwsim)
	}
	if !strings.Contains(err.Error(), m.String()) {
		t.Errorf("the error %q does not give the first mismatch %q", err, m)
	}
	for _, want := range []string{"verify: ", "vectors differ", "threshold±1", "x = [", "golden ", "host C ", "fwsim "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if got.Verify.Mismatches < 1 || got.Verify.Mismatches != r.Verify.Mismatches || got.Verify.UBSan != "clean" {
		t.Errorf("verify %+v", got.Verify)
	}
	if got.Firmware != artifact.FirmwareFile || got.Budget != nil || got.Fidelity != nil || got.CodeBytes == 0 || len(got.Inputs) != 4 {
		t.Errorf("report: firmware %q, budget %v, fidelity %v, code %d bytes, %d inputs", got.Firmware, got.Budget, got.Fidelity, got.CodeBytes, len(got.Inputs))
	}
	if want := []string{"load", "quantize", "fit", "emit", "build", "verify", "report"}; !slices.Equal(stageNames(got), want) {
		t.Errorf("stages %v, want %v", stageNames(got), want)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "golden, host C and fwsim DIFFER on ") ||
		!regexp.MustCompile(`(?m)^FAILED +verify \(mismatch\): verify: \d+ of \d+ vectors differ; the first: `).MatchString(text.String()) {
		t.Errorf("summary:\n%s", text.String())
	}
	if regexp.MustCompile(`(?m)^(WCET|budget) `).MatchString(text.String()) {
		t.Errorf("summary gives a WCET or a budget it did not compute (the budget stage did not run):\n%s", text.String())
	}
}

// A wrong initial rate in the handler is a mismatch on an event: the report gives the event,
// the flow context before it and each implementation's rate and context after.
func TestCompileEventMismatchWritesReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	re := regexp.MustCompile(`\.init_rate = (\d+)u`)
	_, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Form: "walk", Vectors: 2000,
		tamper: tamperFirst(t, artifact.HandlerFile, re, func(m []string) string {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return ".init_rate = " + strconv.FormatInt(n-1, 10) + "u"
		})})
	f := readReport(t, dir).Failure
	if f == nil || f.Kind != "mismatch" || f.Mismatch == nil {
		t.Fatalf("failure %+v (error %v)", f, err)
	}
	m := f.Mismatch
	if m.Entry != artifact.EntryHandler || m.Sequence < 1 || m.Event < 1 || m.In == nil || len(m.StateBefore) != 12 ||
		len(m.Golden.StateAfter) != 12 || len(m.Fwsim.StateAfter) != 12 || m.Golden.Return == m.Fwsim.Return || m.Vector != 0 {
		t.Fatalf("mismatch %+v", m)
	}
	want := regexp.MustCompile(`^verify: \d+ of \d+ vectors differ; the first: nicc_on_event on event \d+ of sequence \d+ \([\w -]+ start\), event \{Type:\w+ RTTNs:\d+ TimestampNs:\d+ FlowID:\d+ TxBytes:\d+\}, context before \[[\d ]+\]: golden rate \d+ context \[[\d ]+\], host C rate \d+ context \[[\d ]+\], host C with UBSan rate \d+ context \[[\d ]+\], fwsim rate \d+ context \[[\d ]+\]$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("error %q", err)
	}
}

// Undefined behaviour in the generated C is caught by the UBSan build even when the
// optimised build happens to compute the right values: a budget.CheckError, and a report
// whose failure is the sanitizer's.
func TestCompileUBSanWritesReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	re := regexp.MustCompile(`int32_t nicc_policy\(const int32_t \*x\)\n\{\n`)
	_, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Form: "walk", Vectors: 2000,
		tamper: tamperFirst(t, "nicc_policy.c", re, func(m []string) string {
			return m[0] + "\tvolatile int32_t ub = INT32_MAX;\n\tub += (x[0] > 0);\n"
		})})
	var ce *budget.CheckError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "UBSan") || !strings.Contains(err.Error(), "signed integer overflow") {
		t.Fatalf("signed overflow in the policy: %v, want a UBSan budget.CheckError", err)
	}
	got := readReport(t, dir)
	f := got.Failure
	if f == nil || f.Stage != "verify" || f.Kind != "ubsan" || f.Mismatch != nil || f.Message != err.Error() ||
		!strings.Contains(f.Message, "signed integer overflow") || got.Verify.UBSan != "not clean" {
		t.Errorf("failure %+v, verify %+v", f, got.Verify)
	}
}

// The report times every stage, in order; the summary prints them; a passing report has no
// failure. The build stage tells progress of each of its three builds as it finishes. The same
// model gives byte-identical C: this compile's sources are rlccReport's.
func TestCompileTimesStages(t *testing.T) {
	t.Parallel()
	var build []int
	var stages []string
	dir := t.TempDir()
	r, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Vectors: 2000,
		Progress: func(stage string, done, total int) {
			if stage == "build" {
				build = append(build, done)
				if total != 3 {
					t.Errorf("build progress total %d, want 3", total)
				}
			}
			if len(stages) == 0 || stages[len(stages)-1] != stage {
				stages = append(stages, stage)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"load", "quantize", "fit", "emit", "build", "verify", "budget", "report"}; !slices.Equal(stageNames(r), want) {
		t.Errorf("stages %v, want %v", stageNames(r), want)
	}
	var total float64
	for _, s := range r.Times {
		if s.Seconds < 0 {
			t.Errorf("stage %s took %v s", s.Stage, s.Seconds)
		}
		total += s.Seconds
	}
	if total <= 0 || r.Times[4].Seconds <= 0 {
		t.Errorf("times %+v", r.Times)
	}
	if !slices.Equal(build, []int{0, 1, 2, 3}) || !slices.Equal(stages, []string{"choose form", "build", "verify"}) {
		t.Errorf("progress: build %v, stages %v; want the candidate forms' builds, build 0, 1, 2, 3, then verify", build, stages)
	}
	if r.Failure != nil {
		t.Errorf("failure %+v", r.Failure)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^times +load [\d.]+ m?s, quantize [\d.]+ m?s, fit [\d.]+ m?s, emit [\d.]+ m?s, build [\d.]+ m?s, verify [\d.]+ m?s, budget [\d.]+ m?s, report [\d.]+ m?s; total [\d.]+ m?s$`).MatchString(text.String()) {
		t.Errorf("no times line:\n%s", text.String())
	}
	if strings.Contains(text.String(), "FAILED") {
		t.Errorf("a passing summary says FAILED:\n%s", text.String())
	}

	r1, dir1 := rlccReport(t)
	for _, name := range []string{"nicc_policy.c", "nicc_policy.h", artifact.HandlerFile, "host/driver.c", nicsdk.RLCCHeaderName} {
		a, err1 := os.ReadFile(filepath.Join(dir1, name))
		b, err2 := os.ReadFile(filepath.Join(dir, name))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two compiles of the same model", name)
		}
	}
	c, err := os.ReadFile(filepath.Join(dir1, "nicc_policy.c"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(c, []byte(r1.Model.Hash)) {
		t.Errorf("nicc_policy.c does not carry the model hash %s", r1.Model.Hash)
	}
}
