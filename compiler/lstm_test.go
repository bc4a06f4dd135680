package compiler

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/nicsdk"
)

const lstmONNX = "../testdata/models/rlcc_lstm.onnx"

// lstmRLCCReport is the shipped LSTM's compile with nicc's defaults (dpa, the default
// calibration), on outputVectors vectors and seed 1: the compile TestShippedOutputsUnchanged
// pins as lstm_int, made once for both.
func lstmRLCCReport(t *testing.T) (*artifact.CompileReport, string) {
	return compileOnce(t, "lstm-rlcc", CompileOptions{Model: lstmONNX, Vectors: outputVectors, Seed: 1, Int8: &golden.Int8Options{}})
}

// The shipped LSTM policy inside the whole RL-CC handler: 20k vectors (policy calls with
// state, and event sequences carrying h and c in the flow context) bit-exact, the state in
// words 6..11, the action map folded into the output table, the handler within 2 µs on dpa.
func TestCompileLSTMRLCC(t *testing.T) {
	t.Parallel()
	r, dir := lstmRLCCReport(t)
	if r.Budget.Core.Name != "dpa" {
		t.Errorf("core %q, want dpa (the default)", r.Budget.Core.Name)
	}
	v := r.Verify
	if v.Mismatches != 0 || v.Vectors < outputVectors || v.Events < outputVectors/2 || v.UBSan != "clean" {
		t.Errorf("verify: %d vectors, %d events, %d mismatches, UBSan %s", v.Vectors, v.Events, v.Mismatches, v.UBSan)
	}
	if !strings.Contains(v.Compared[0], "LSTMIR.Step inside nicsdk.OnEventEx") {
		t.Errorf("compared %q", v.Compared)
	}
	l := r.LSTM
	if l == nil {
		t.Fatal("no lstm section in the report")
	}
	if l.Hidden != 12 || l.StateBytes != 24 || l.StateWords != 6 || !l.Folded || !strings.Contains(l.StateLayout, "words 6..11") {
		t.Errorf("lstm %+v", *l)
	}
	if r.StateBytes != nicsdk.CtxBytes || r.StateLimit != nicsdk.CtxBytes {
		t.Errorf("flow state %d of %d bytes, want the whole 48", r.StateBytes, r.StateLimit)
	}
	// A regression bound on the measured fidelity (the issue sets no target for the LSTM).
	if l.CalibRows != golden.DefaultCalibSamples || l.MaxAbsDy > 3.0/128 || l.FlipRate > 0.02 {
		t.Errorf("fidelity over %d rows: max |dy| %v, flips %v", l.CalibRows, l.MaxAbsDy, l.FlipRate)
	}
	// Along the verify sequences of new flows, against the float LSTM with its own state: the
	// sequences reach o's clamp (128), beyond the calibration's 76.8, where x_t saturates.
	if h := r.HandlerFidelity; h == nil || h.Vectors < 1000 || h.Total.MaxAbs > 0.1 || h.Total.RMSE > 0.02 {
		t.Errorf("decisions' fidelity %+v", h)
	}
	// Three forms are built and bounded: the table form (every unit's recurrent products from
	// tables of all 256 rows, 384 KiB) is over the 256 KiB of tables dpa's budget allows; the
	// branch form multiplies them all; the planned table form, within the budget (x0's rows
	// with the biases, the units of h by sign or all their rows), is chosen, faster than both
	// and within issue 15's 2,700 cycles for the whole handler.
	cs := r.Build.Candidates
	if len(cs) != 3 || cs[0].Form != "table" || cs[0].Fits || cs[0].RodataBytes <= 256<<10 ||
		cs[1].Form != "branch" || !cs[1].Fits || cs[1].Chosen ||
		cs[2].Form != "table" || !cs[2].Fits || !cs[2].Chosen || cs[2].WCETCycles >= cs[0].WCETCycles || cs[2].WCETCycles > 2700 ||
		!strings.Contains(cs[2].Detail, "with the biases") || !strings.Contains(cs[2].Detail, "subtracted when h < 0") {
		t.Fatalf("forms %+v", cs)
	}
	if b := r.Budget; b.WCETCycles != cs[2].WCETCycles || !b.Fits || b.Measured == nil || b.Measured.MaxCycles > b.WCETCycles {
		t.Errorf("WCET of %s %d cycles = %v µs, want the chosen form's; measured %+v", b.Entry, b.WCETCycles, b.WCETMicros, b.Measured)
	}
	if g := r.Golden; g == nil || g.Form != "table" || g.Products == "" {
		t.Errorf("golden %+v does not record the planned table form", g)
	}
	// 355 packed words under seed 1's calibration (the pinned compile's): each input's nonzero
	// weights, two to a word over the dense units not proven off (32-bit lanes), three to a
	// word over the 48 gates; 48 gate lookups and 12 output weights: a cycle each.
	if lb, p := r.LowerBound, r.PolicyAlone; lb == nil || p == nil || lb.Cycles != 414 || lb.Cycles > p.WCETCycles {
		t.Errorf("lower bound %+v, policy alone %+v", lb, p)
	}
	h, err := os.ReadFile(filepath.Join(dir, artifact.HandlerFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), "RLCC_DEFINE_HANDLER_EX(nicc_params, nicc_policy_inline, 6, RLCC_OUT_M)") {
		t.Errorf("%s does not define the stateful, folded handler:\n%s", artifact.HandlerFile, h)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LSTM network", "nicc_policy(x, state)", "int LSTM", "action map folded in", "flow state 48 of 48 bytes",
		"decisions along the event sequences of new flows"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report text lacks %q:\n%s", want, text.String())
		}
	}
	t.Logf("\n%s", text.String())
}

// Within dpa's memory the planned table form is chosen (the tables planProducts fits in the
// .rodata budget, over the 256-row table form and every product multiplied) and verifies bit
// for bit through the handler, in at most issue 15's 2,700 cycles; report.json's golden
// records the form and its plan (what eval DIR and sim rebuild). The plans themselves, for
// other budgets, are lstm_plan_test.go's.
func TestCompileLSTMTableForm(t *testing.T) {
	t.Parallel()
	r, _ := lstmRLCCReport(t)
	if r.Build.Form != "table" || r.Verify.Mismatches != 0 || r.Verify.UBSan != "clean" {
		t.Errorf("form %s, verify %+v", r.Build.Form, r.Verify)
	}
	if c := r.Build.Candidates; len(c) != 3 || !c[2].Chosen || !c[2].Fits || c[0].Fits || !strings.HasPrefix(c[2].Detail, "partial products from tables") {
		t.Errorf("candidates %+v: want the planned tables chosen, the 256-row tables over the budget", c)
	}
	if b := r.Budget; b.WCETCycles > 2700 || b.Measured == nil || b.Measured.MaxCycles > b.WCETCycles {
		t.Errorf("WCET of %s %d cycles, want at most 2700; measured %+v", b.Entry, b.WCETCycles, b.Measured)
	}
	if r.Golden == nil || r.Golden.Form != "table" || r.Golden.Products == "" {
		t.Fatalf("golden %+v does not record the planned table form", r.Golden)
	}
}

// --handler none: the policy alone takes its state as a pointer and returns y.
func TestCompileLSTMNone(t *testing.T) {
	t.Parallel()
	r, dir := compileOnce(t, "lstm-none", CompileOptions{Model: lstmONNX, Handler: artifact.HandlerNone, Form: "branch", Vectors: 5000, Int8: &golden.Int8Options{Calib: teacherRef}})
	if r.Entry != artifact.EntryPolicy || r.Verify.Mismatches != 0 || r.Verify.Events != 0 || r.LSTM == nil || r.LSTM.Folded {
		t.Fatalf("entry %s verify %+v lstm %+v", r.Entry, r.Verify, r.LSTM)
	}
	if r.StateBytes != 24 || !strings.Contains(r.LSTM.StateLayout, "words 0..5") {
		t.Errorf("state %d bytes, layout %q", r.StateBytes, r.LSTM.StateLayout)
	}
	hdr, err := os.ReadFile(filepath.Join(dir, "nicc_policy.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"int32_t nicc_policy(const int32_t *x, uint32_t *state);", "#define NICC_POLICY_STATE_WORDS 6"} {
		if !strings.Contains(string(hdr), want) {
			t.Errorf("nicc_policy.h lacks %q", want)
		}
	}
}

// A wrong entry in a gate table, and a wrong update of the stored state, are each caught:
// the first by the outputs, the second by the state words compared after every call.
func TestCompileLSTMCatchesMismatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
		repl func(m []string) string
	}{
		{"output table", regexp.MustCompile(`nicc_policy_out\[1024\] = \{\n\t(\d+)`), func(m []string) string {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return strings.Replace(m[0], m[1], strconv.FormatInt(n+1, 10), 1)
		}},
		{"cell state", regexp.MustCompile(`s\[12\] = \(int8_t\)cn0;`), func(m []string) string {
			return "s[12] = (int8_t)(cn0 / 2);"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opt := CompileOptions{Model: lstmONNX, Out: t.TempDir(), Form: "branch", Vectors: 1000, Int8: &golden.Int8Options{Samples: 2000},
				tamper: tamperFirst(t, "nicc_policy.c", c.re, c.repl)}
			_, err := Compile(opt)
			var ce *budget.CheckError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "vectors differ") {
				t.Fatalf("%s: %v, want a mismatch", c.name, err)
			}
			t.Logf("%s: %v", c.name, err)
		})
	}
}
