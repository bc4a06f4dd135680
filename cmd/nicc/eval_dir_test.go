package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// evalDirOut is nicc eval DIR --json.
type evalDirOut struct {
	Handler    string   `json:"handler"`
	Golden     string   `json:"golden"`
	Inputs     []string `json:"inputs"`
	RateBefore float64  `json:"rate_before"`
	Returns    string   `json:"returns"`
	Rows       []struct {
		Line        int       `json:"line"`
		XRaw        []int32   `json:"x_raw"`
		Float       []float64 `json:"float"`
		GoldenRaw   int32     `json:"golden_raw"`
		FirmwareRaw int32     `json:"firmware_raw"`
		Golden      float64   `json:"golden"`
		Firmware    float64   `json:"firmware"`
		M           uint32    `json:"multiplier_q16"`
		Rate        uint32    `json:"rate_fxp20"`
		Multiplier  float64   `json:"multiplier"`
		NewRate     float64   `json:"new_rate"`
		GoldenYD    *float64  `json:"golden_y_derived"`
		FirmwareYD  *float64  `json:"firmware_y_derived"`
		Cycles      uint64    `json:"cycles"`
		Agree       bool      `json:"agree"`
		Missing     string    `json:"missing"`
	} `json:"rows"`
	Summary struct {
		Rows      int     `json:"rows"`
		NotRun    int     `json:"not_run_missing"`
		Differ    int     `json:"differ"`
		MaxErr    float64 `json:"max_abs_firmware_vs_float"`
		CyclesMin uint64  `json:"cycles_min"`
		CyclesMax uint64  `json:"cycles_max"`
	} `json:"summary"`
}

// reportOf is the part of report.json these tests read.
type reportOf struct {
	Inputs []struct {
		Frac int   `json:"frac"`
		Min  int32 `json:"min"`
		Max  int32 `json:"max"`
	} `json:"inputs"`
	Budget struct {
		WCET     uint64         `json:"wcet_cycles"`
		Measured map[string]any `json:"measured"`
	} `json:"budget"`
	PolicyAlone struct {
		WCET uint64 `json:"wcet_cycles"`
		Max  uint64 `json:"max_measured_cycles"`
	} `json:"policy_alone"`
	VectorFiles []struct {
		Entry, File string
		Vectors     int
	} `json:"vector_files"`
}

func readReportOf(t *testing.T, dir string) *reportOf {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r reportOf
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// compileDir is a compile with 3000 vectors that tests only read (sharedCompile).
func compileDir(t *testing.T, args ...string) string {
	t.Helper()
	return compiledOK(t, args...).dir
}

// compiledOK is compileDir's compile with its output; a compile that fails fails the test.
func compiledOK(t *testing.T, args ...string) *compiled {
	t.Helper()
	c := sharedCompile(t, append([]string{"--vectors", "3000"}, args...)...)
	if c.code != exitOK {
		t.Fatalf("compile %v: exit %d: %s", args, c.code, c.stderr)
	}
	return c
}

// rlccXGB is the shipped XGBoost ensemble compiled under the RL-CC handler (compiledOK), the
// compile TestCompileRLCC checks and many tests read. It is built in the walk form: none of
// its readers is about which code form fit picks (the compiler's tests check that choice, and
// TestCompileBaseRTT's compile here still makes it), and making the choice builds every
// candidate form first, about twice the CPU of the one build.
func rlccXGB(t *testing.T) *compiled {
	t.Helper()
	return compiledOK(t, models+"rlcc_xgb.json", "--form", "walk")
}

func evalDirJSON(t *testing.T, dir, rows string, extra ...string) *evalDirOut {
	t.Helper()
	code, out, stderr := nicc(t, append([]string{"eval", dir, "--input", rows, "--json"}, extra...)...)
	if code != exitOK {
		t.Fatalf("eval %s: exit %d: %s", dir, code, stderr)
	}
	var r evalDirOut
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return &r
}

// floatLines is what nicc eval MODEL prints for rows: the float column eval DIR must repeat.
func floatLines(t *testing.T, modelFile, rows string) []float64 {
	t.Helper()
	code, out, stderr := nicc(t, "eval", modelFile, "--input", rows)
	if code != exitOK {
		t.Fatalf("eval %s: exit %d: %s", modelFile, code, stderr)
	}
	var ys []float64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		y, err := strconv.ParseFloat(strings.Split(l, ",")[0], 64)
		if err != nil {
			t.Fatal(err)
		}
		ys = append(ys, y)
	}
	return ys
}

// quantizeRaw is round(v·2^frac) clamped to [lo, hi]: the report's input format.
func quantizeRaw(v float64, frac int, lo, hi int32) int32 {
	r := math.Round(math.Ldexp(v, frac))
	return int32(min(max(r, float64(lo)), float64(hi)))
}

// TestEvalDirTrees runs the shipped XGBoost ensemble's firmware on its reference rows, under
// the RL-CC handler and alone: every row's inputs quantized with the report's formats, the
// float column what eval MODEL prints, firmware == golden, and under RL-CC the multiplier and
// rate nicsdk's Go twins give from the firmware's y; the 64 rows with a missing value are
// printed, not run.
func TestEvalDirTrees(t *testing.T) {
	t.Parallel()
	ref := models + "rlcc_xgb.ref.csv"
	refRows, err := model.ReadCSVFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	floats := floatLines(t, models+"rlcc_xgb.json", ref)
	for _, handler := range []string{"rlcc", "none"} {
		t.Run(handler, func(t *testing.T) {
			dir := compileDir(t, models+"rlcc_xgb.json", "--handler", handler, "--ranges", ref, "--form", "walk")
			rep := readReportOf(t, dir)
			r := evalDirJSON(t, dir, ref)
			if r.Handler != handler || r.Golden != "quantize.TreeIR.Eval" || len(r.Rows) != len(refRows.Data) {
				t.Fatalf("handler %q golden %q, %d rows for %d", r.Handler, r.Golden, len(r.Rows), len(refRows.Data))
			}
			if s := r.Summary; s.Rows != 2088 || s.NotRun != 64 || s.Differ != 0 || s.MaxErr > 1e-4 {
				t.Errorf("summary %+v", s)
			}
			for i, row := range r.Rows {
				x := refRows.Data[i][:4]
				if row.Line != i+2 || row.Float[0] != floats[i] {
					t.Fatalf("row %d: line %d, float %v; eval MODEL printed %v", i+1, row.Line, row.Float, floats[i])
				}
				if row.Missing != "" {
					if !hasNaN(x) {
						t.Errorf("row %d not run (%s) but has no NaN: %v", i+1, row.Missing, x)
					}
					continue
				}
				for j, v := range x {
					in := rep.Inputs[j]
					if want := quantizeRaw(v, in.Frac, in.Min, in.Max); row.XRaw[j] != want {
						t.Fatalf("row %d input %d: x_raw %d, want %d from %v in Q%d", i+1, j, row.XRaw[j], want, v, in.Frac)
					}
				}
				if !row.Agree || row.FirmwareRaw != row.GoldenRaw || row.Firmware != float64(row.FirmwareRaw)/65536 {
					t.Fatalf("row %d: %+v", i+1, row)
				}
				wcet := rep.Budget.WCET
				if handler == "rlcc" {
					wcet = rep.PolicyAlone.WCET
					m := nicsdk.Multiplier(row.FirmwareRaw)
					rate := nicsdk.UpdateRate(nicsdk.LineRate/2, m, nicsdk.DefaultParams())
					if row.M != m || row.Rate != rate || row.Multiplier != float64(m)/65536 || row.NewRate != float64(rate)/nicsdk.LineRate {
						t.Fatalf("row %d: multiplier %d rate %d (%v, %v); want %d, %d", i+1, row.M, row.Rate, row.Multiplier, row.NewRate, m, rate)
					}
				} else if row.M != 0 || row.Rate != 0 {
					t.Fatalf("row %d: a multiplier without the handler: %+v", i+1, row)
				}
				if row.Cycles == 0 || row.Cycles > wcet {
					t.Fatalf("row %d: %d cycles, WCET %d", i+1, row.Cycles, wcet)
				}
			}
		})
	}
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

// TestEvalDirText checks the table eval DIR prints, --rate, and the failures: a firmware that
// is not the one compiled (the RL-CC build's in the --handler none directory) differs from
// the golden model on the rows it flags and exits 1; a model file changed since the compile,
// a directory that is no compile output, or an LSTM's h and c named in the rows exit 2.
func TestEvalDirText(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	modelCopy := filepath.Join(work, "rlcc_xgb.json")
	data, err := os.ReadFile(models + "rlcc_xgb.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(modelCopy, data, 0o644)
	none := compileDir(t, modelCopy, "--handler", "none", "--ranges", models+"rlcc_xgb.ref.csv", "--form", "walk")
	rlcc := rlccXGB(t).dir
	rows := filepath.Join(work, "rows.csv")
	os.WriteFile(rows, []byte("o,a_prev2,o_prev,a_prev\n0.5,1,0.2,1\n40,0.9,3,1.1\n200,1.2,-1,0.8\n"), 0o644)

	code, out, stderr := nicc(t, "eval", rlcc, "-i", rows, "--rate", "0.25")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4+3+1 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for i, want := range []string{
		"firmware  " + rlcc + "/firmware.elf: nicc_policy(x) in fwsim on dpa; x = the row's a_prev, o, a_prev2, o_prev quantized with report.json's formats",
		"golden    quantize.TreeIR.Eval, rebuilt from " + models + "rlcc_xgb.json (model IR sha256 ",
		"rl-cc     each row is one decision: the multiplier, and the new rate from 0.25 of line rate",
		"line    float_y       golden_y      firmware_y    multiplier    new_rate      cycles",
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], want)
		}
	}
	rowRE := regexp.MustCompile(`^\d +-?[0-9.e-]+ +-?[0-9.e-]+ +-?[0-9.e-]+ +[0-9.]+ +0\.[0-9]+ +\d+$`)
	for _, l := range lines[4:7] {
		if !rowRE.MatchString(l) {
			t.Errorf("row line %q", l)
		}
	}
	if !regexp.MustCompile(`^rows      3: firmware == golden on every row; max \|firmware - float\| \S+ \(y\); nicc_policy cycles min \d+, median \d+, max \d+$`).MatchString(lines[7]) {
		t.Errorf("summary %q", lines[7])
	}
	// The header named the inputs out of order: the same rows in the model's order agree.
	r := evalDirJSON(t, rlcc, rows, "--rate", "0.25")
	if x := r.Rows[1].XRaw; x[0] != 72090 || x[1] != 40<<16 || x[2] != 58982 || x[3] != 3<<16 {
		t.Errorf("row 2 (a_prev 1.1, o 40, a_prev2 0.9, o_prev 3): x_raw %v", x)
	}
	if x := r.Rows[2].XRaw; x[0] != nicsdk.AMin || x[1] != nicsdk.OMax || x[2] != nicsdk.AMax || x[3] != nicsdk.ObsMin(nicsdk.DefaultParams()) {
		t.Errorf("row 3 (each input beyond the handler's range, clamped): x_raw %v", x)
	}

	tampered := filepath.Join(work, "tampered")
	if err := os.CopyFS(tampered, os.DirFS(none)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(rlcc, "firmware.elf")) // Q16 inputs where the golden model has its own formats
	os.WriteFile(filepath.Join(tampered, "firmware.elf"), b, 0o644)
	// Copied in from another compile, the firmware is refused before it runs.
	code, _, stderr = nicc(t, "eval", tampered, "-i", models+"rlcc_xgb.ref.csv")
	if want := "nicc: " + filepath.Join(tampered, "firmware.elf") + ": changed since nicc compile wrote it ("; code != exitBadInput ||
		!strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("swapped firmware: exit %d, %q; want exit 2 and one line %q", code, stderr, want)
	}
	// With a report that vouches for it (a compile gone wrong), each row that differs is flagged.
	reseal(t, tampered)
	code, out, stderr = nicc(t, "eval", tampered, "-i", models+"rlcc_xgb.ref.csv")
	if code != exitCheck {
		t.Fatalf("tampered firmware: exit %d, want %d: %s", code, exitCheck, stderr)
	}
	if !regexp.MustCompile(`^nicc: \S+/tampered/firmware.elf: the firmware and the golden model differ on \d+ of 2088 rows of \S+rlcc_xgb.ref.csv \(first: line 4\)\n$`).MatchString(stderr) {
		t.Errorf("stderr %q", stderr)
	}
	if n := strings.Count(out, "DIFFERS from the golden model"); n < 100 || !strings.Contains(line(out, "rows"), "firmware != golden on "+strconv.Itoa(n)+" rows (first: line 4)") {
		t.Errorf("%d rows flagged; summary %q", n, line(out, "rows"))
	}
	code, _, stderr = nicc(t, "eval", tampered, "-i", models+"rlcc_xgb.ref.csv", "--json")
	if code != exitCheck || strings.Count(stderr, "\n") != 1 {
		t.Errorf("--json: exit %d, stderr %q", code, stderr)
	}

	os.WriteFile(modelCopy, []byte(strings.Replace(string(data), `"base_score":"`, `"base_score":"1`, 1)), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{none}, "model " + modelCopy + " has changed since the compile (model IR sha256 "},
		{[]string{work}, "is a directory without report.json and firmware.elf"},
		{[]string{rlcc, "--rate", "2"}, "rate 2: want a fraction of line rate in ["},
	} {
		code, _, stderr := nicc(t, append([]string{"eval", "-i", rows}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
	// The file compiled, given by --model, is accepted.
	if code, _, stderr := nicc(t, "eval", none, "-i", rows, "--model", models+"rlcc_xgb.json"); code != exitOK {
		t.Errorf("--model: exit %d: %s", code, stderr)
	}
}

// TestEvalDirNetworks runs the integer MLP's and the LSTM's firmware: firmware == golden on
// every row (the LSTM's state words too, along one flow), and budget on the same CSV rows
// measures the same cycles. Under the RL-CC handler both return the multiplier (the action
// map folded into their output tables).
func TestEvalDirNetworks(t *testing.T) {
	t.Parallel()
	teacherRef := models + "rlcc_teacher.ref.csv"
	for _, c := range []struct {
		name, model, rows, golden, returns string
	}{
		{"mlp", models + "rlcc_teacher.json", teacherRef, "quantize.MLPIR.Eval", "multiplier"},
		{"lstm", models + "rlcc_lstm.onnx", models + "rlcc_lstm.steps.csv", "quantize.LSTMIR.Step", "multiplier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := compileDir(t, c.model, "--target", "int8", "--samples", "4000", "--form", "branch")
			r := evalDirJSON(t, dir, c.rows)
			floats := floatLines(t, c.model, c.rows)
			if r.Golden != c.golden || r.Returns != c.returns || r.Summary.Differ != 0 || r.Summary.Rows != len(floats) {
				t.Fatalf("golden %q returns %q summary %+v", r.Golden, r.Returns, r.Summary)
			}
			for i, row := range r.Rows {
				if !row.Agree || row.FirmwareRaw != row.GoldenRaw || row.Float[0] != floats[i] {
					t.Fatalf("row %d: %+v (eval MODEL printed %v)", i+1, row, floats[i])
				}
				m := nicsdk.Multiplier(row.FirmwareRaw)
				if c.returns == "multiplier" {
					m = uint32(row.FirmwareRaw) // the output table holds the multiplier (folded)
				}
				if row.M != m || row.Rate != nicsdk.UpdateRate(nicsdk.LineRate/2, m, nicsdk.DefaultParams()) {
					t.Fatalf("row %d: multiplier %d rate %d, want %d", i+1, row.M, row.Rate, m)
				}
				// The float model's y against the firmware's, in what the firmware returns.
				want := row.Float[0]
				if c.returns == "multiplier" {
					want = rlcc.HandlerMultiplier(want)
				}
				if math.Abs(row.Firmware-want) > 0.05 {
					t.Fatalf("row %d: firmware %v, float %v", i+1, row.Firmware, want)
				}
				// A firmware that returns the multiplier shows the y it stands for too, derived by
				// inverting the action map, beside the network's y (issue 26).
				if c.returns == "multiplier" {
					y := min(max(row.Float[0], -1), 1)
					if row.FirmwareYD == nil || row.GoldenYD == nil || *row.FirmwareYD != rlcc.OutputOf(row.Firmware) ||
						*row.GoldenYD != rlcc.OutputOf(row.Golden) || math.Abs(*row.FirmwareYD-y) > 0.05 {
						t.Fatalf("row %d: y derived %v (golden %v), want OutputOf(%v) near the float y %v", i+1, row.FirmwareYD, row.GoldenYD, row.Firmware, y)
					}
				}
			}
			code, text, stderr := nicc(t, "eval", dir, "-i", c.rows)
			if code != exitOK || !strings.HasPrefix(line(text, "y"), "y nicc_policy returns the multiplier m (the action map is folded into its output table); golden_y* and firmware_y* are the network output y it stands for, derived: (m - 1)/0.2 for m >= 1") ||
				!strings.Contains(text, "\nline    float_y       float_m       golden_m      firmware_m    golden_y*     firmware_y*   new_rate      cycles\n") {
				t.Errorf("eval DIR text: exit %d, %s\n%s", code, stderr, text)
			}
			code, out, stderr := nicc(t, "budget", dir, "--vectors", c.rows, "--json")
			var b struct {
				Entry    string `json:"entry"`
				Measured struct {
					Vectors int    `json:"vectors"`
					Min     uint64 `json:"min_cycles"`
					Max     uint64 `json:"max_cycles"`
				} `json:"measured"`
			}
			if err := json.Unmarshal([]byte(out), &b); err != nil || code != exitOK {
				t.Fatalf("budget --vectors %s: exit %d, %v: %s", c.rows, code, err, stderr)
			}
			same := b.Measured.Min == r.Summary.CyclesMin && b.Measured.Max == r.Summary.CyclesMax
			if c.name == "lstm" {
				// budget calls each row from a new flow's zeroed state, eval DIR carries the state
				// along the rows, and the LSTM's time depends on it (a sign table's branch on h):
				// the first row, from the zero state in both, is the one call they share.
				first := r.Rows[0].Cycles
				same = b.Measured.Min <= first && first <= b.Measured.Max
			}
			if b.Entry != "nicc_policy" || b.Measured.Vectors != len(floats) || !same {
				t.Errorf("budget %+v; eval's cycles %d..%d over %d rows, %d on the first", b, r.Summary.CyclesMin, r.Summary.CyclesMax, len(floats), r.Rows[0].Cycles)
			}
			if c.name == "lstm" {
				code, _, stderr := nicc(t, "eval", dir, "-i", models+"rlcc_lstm.ref.csv")
				if code != exitBadInput || !strings.Contains(stderr, "the header names the LSTM's h and c; eval DIR runs the rows as one flow's consecutive steps") {
					t.Errorf("ref rows with h and c: exit %d, %q", code, stderr)
				}
			}
		})
	}
}

// TestBudgetReRunsCompileVectors: the vectors compile wrote beside the ELF give the report's
// measured cycles again, through nicc budget DIR and through the bare ELF with --vectors.
func TestBudgetReRunsCompileVectors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args  []string
		files int // vector files: the handler's and nicc_policy's under RL-CC, else one
	}{
		{[]string{models + "rlcc_xgb.json", "--form", "walk"}, 2}, // rlccXGB's
		{[]string{models + "rlcc_xgb.json", "--handler", "none", "--form", "walk"}, 1},
		{[]string{models + "rlcc_lstm.onnx", "--target", "int8", "--samples", "4000", "--handler", "none", "--calib", models + "rlcc_teacher.ref.csv", "--form", "branch"}, 1},
	} {
		args := c.args
		dir := compileDir(t, args...)
		rep := readReportOf(t, dir)
		for _, vf := range rep.VectorFiles {
			for _, cmd := range [][]string{
				{"budget", dir, "--entry", vf.Entry, "--json"},
				{"budget", filepath.Join(dir, "firmware.elf"), "--entry", vf.Entry, "--vectors", filepath.Join(dir, vf.File), "--json"},
			} {
				code, out, stderr := nicc(t, cmd...)
				var b struct {
					Measured map[string]any `json:"measured"`
				}
				if err := json.Unmarshal([]byte(out), &b); err != nil || code != exitOK {
					t.Fatalf("%v: exit %d, %v: %s", cmd, code, err, stderr)
				}
				if b.Measured["vectors"] != float64(vf.Vectors) {
					t.Errorf("%v: %v vectors, the report says %d", cmd, b.Measured["vectors"], vf.Vectors)
				}
				switch vf.Entry {
				case rep.entry():
					if !reflect.DeepEqual(b.Measured, rep.Budget.Measured) {
						t.Errorf("%v: measured %v, the report's %v", cmd, b.Measured, rep.Budget.Measured)
					}
				default: // nicc_policy inside the RL-CC firmware
					if b.Measured["max_cycles"] != float64(rep.PolicyAlone.Max) {
						t.Errorf("%v: max %v, the report's policy alone %d", cmd, b.Measured["max_cycles"], rep.PolicyAlone.Max)
					}
				}
			}
		}
		if len(rep.VectorFiles) != c.files {
			t.Errorf("%v: vector files %+v", args, rep.VectorFiles)
		}
	}
}

// TestBudgetCSVVectors: CSV rows for a bare ELF are raw int32 inputs, and anything else is
// refused naming the line; CSV rows go to nicc_policy only.
func TestBudgetCSVVectors(t *testing.T) {
	t.Parallel()
	dir := compileDir(t, models+"rlcc_xgb.json", "--handler", "none", "--form", "walk")
	work := t.TempDir()
	raw := filepath.Join(work, "raw.csv")
	os.WriteFile(raw, []byte("1,2,3,4\n-5,6,-7,8\n2147483647,0,0,-2147483648\n"), 0o644)
	code, out, stderr := nicc(t, "budget", filepath.Join(dir, "firmware.elf"), "--vectors", raw, "--json")
	if code != exitOK || !strings.Contains(out, `"entry": "nicc_policy"`) || !strings.Contains(out, `"vectors": 3,`) {
		t.Errorf("raw rows: exit %d: %s%s", code, out, stderr)
	}
	bad := filepath.Join(work, "bad.csv")
	os.WriteFile(bad, []byte("1,2,3,4\n1,2.5,3,4\n"), 0o644)
	narrow := filepath.Join(work, "narrow.csv")
	os.WriteFile(narrow, []byte("1,2,3\n"), 0o644)
	nan := filepath.Join(work, "nan.tsv")
	os.WriteFile(nan, []byte("a_prev\to\ta_prev2\to_prev\n1\tNaN\t1\t0\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "firmware.elf"), "--vectors", bad}, "bad.csv: line 2: column 2: 2.5 is not an int32: rows for a bare ELF hold raw inputs"},
		{[]string{dir, "--vectors", nan}, "nan.tsv: line 2: column 2 is NaN: the firmware's inputs are integers"},
		{[]string{dir, "--vectors", narrow}, "narrow.csv: rows have 3 values; nicc_policy takes 4 inputs"},
		{[]string{dir, "--entry", "nicc_on_event", "--vectors", raw}, "CSV rows are nicc_policy's inputs, not --entry nicc_on_event's arguments"},
		{[]string{work}, "is a directory without report.json and firmware.elf: budget takes an ELF file or a nicc compile output directory"},
	} {
		code, _, stderr := nicc(t, append([]string{"budget"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
}

func (r *reportOf) entry() string {
	if r.PolicyAlone.WCET > 0 {
		return "nicc_on_event"
	}
	return "nicc_policy"
}
