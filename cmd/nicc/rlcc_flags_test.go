package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unnamed is the RL-CC teacher as a plain torch export (testdata/gen/unnamed.py): the same
// weights as rlcc_teacher.onnx, one input tensor "input", so its inputs read input[0]..input[3].
const (
	unnamed    = models + "rlcc_teacher_unnamed.onnx"
	rlccInputs = "a_prev,o,a_prev2,o_prev"
	needsRows  = "nicc: " + unnamed + ": a model whose inputs (input[0], input[1], input[2], input[3]) are not named in an RL-CC layout needs calibration rows: sample RL-CC states with --handler rlcc (inputs by position, newest state first), or name the inputs: --inputs nicc (newest state first: a_prev,o,a_prev2,o_prev), --inputs authors [--history K --features LIST] (NVlabs/RLCC, oldest first: a_prev2,o_prev,a_prev,o), or the names in the model's order, e.g. --inputs a_prev2,o_prev,a_prev,o, or give rows with --calib ROWS.csv\n"
)

// wantBadInput runs the CLI and wants exit 2 with exactly the stderr line want.
func wantBadInput(t *testing.T, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := nicc(t, args...)
	if code != exitBadInput || stderr != want {
		t.Errorf("%v: exit %d, stderr %q (stdout %q); want exit 2 and %q", args, code, stderr, stdout, want)
	}
}

// jsonOf runs the CLI, wants exit 0 and decodes its --json output into v.
func jsonOf(t *testing.T, v any, args ...string) {
	t.Helper()
	code, stdout, stderr := nicc(t, append(args, "--json")...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("%v: %v:\n%s", args, err, stdout)
	}
}

type rlccParamsJSON struct {
	Target   float64 `json:"target"`
	Beta     float64 `json:"beta"`
	Scale    float64 `json:"scale"`
	MinRate  float64 `json:"min_rate"`
	InitRate float64 `json:"init_rate"`
	ScaleQ16 uint32  `json:"scale_q16"`
}

type diffJSON struct {
	Calib  string          `json:"calib"`
	Stats  json.RawMessage `json:"stats"`
	Params *rlccParamsJSON `json:"rlcc_params"`
}

// An export whose inputs are not named a_prev, o, a_prev2, o_prev: diff refuses naming the
// flags; with --handler rlcc or --inputs it compares exactly what the named teacher gives.
func TestDiffUnnamedInputs(t *testing.T) {
	wantBadInput(t, needsRows, "diff", unnamed, "--samples", "500")
	wantBadInput(t, needsRows, "diff", unnamed, "--samples", "500", "--against", "trees")

	var named, byHandler, byInputs diffJSON
	jsonOf(t, &named, "diff", models+"rlcc_teacher.onnx", "--samples", "1000")
	jsonOf(t, &byHandler, "diff", unnamed, "--samples", "1000", "--handler", "rlcc")
	jsonOf(t, &byInputs, "diff", unnamed, "--samples", "1000", "--inputs", rlccInputs)
	if string(byHandler.Stats) != string(named.Stats) || string(byInputs.Stats) != string(named.Stats) {
		t.Errorf("stats differ:\nnamed     %s\n--handler %s\n--inputs  %s", named.Stats, byHandler.Stats, byInputs.Stats)
	}
	if p := named.Params; p == nil || p.Target != 0.063995361328125 || p.Beta != 1.5 || p.Scale != 12 || p.MinRate != 0.0010004043579101562 || p.InitRate != 1 {
		t.Errorf("rlcc_params %+v, want nicsdk's defaults", p)
	}

	// The parameters change the sampled states (T = target·scale) and the report.
	var scaled diffJSON
	jsonOf(t, &scaled, "diff", unnamed, "--samples", "1000", "--handler", "rlcc", "--rlcc-scale", "6")
	if scaled.Params == nil || scaled.Params.Scale != 6 || scaled.Params.ScaleQ16 != 6<<16 {
		t.Errorf("--rlcc-scale 6: rlcc_params %+v", scaled.Params)
	}
	if want := "1000 RL-CC states sampled with T = 0.384 (seed 1)"; scaled.Calib != want {
		t.Errorf("--rlcc-scale 6: calib %q, want %q", scaled.Calib, want)
	}
	if string(scaled.Stats) == string(named.Stats) {
		t.Error("--rlcc-scale 6 compared on the same states as scale 12")
	}
	code, stdout, stderr := nicc(t, "diff", unnamed, "--samples", "500", "--handler", "rlcc", "--rlcc-beta", "2")
	if want := "rl-cc target 0.064 (default), beta 2 (flag), scale 12 (default), min rate 0.001 (default) and init rate 1 (default) of line rate, base RTT 0 = provisioned by the host at flow start, else learned (default)"; code != exitOK || line(stdout, "rl-cc") != want {
		t.Errorf("--rlcc-beta 2: exit %d, rl-cc line %q, want %q; stderr %s", code, line(stdout, "rl-cc"), want, stderr)
	}
}

type distillJSON struct {
	Grid    string          `json:"grid"`
	HeldOut json.RawMessage `json:"held_out"`
	Notes   []string        `json:"notes"`
	Params  *rlccParamsJSON `json:"rlcc_params"`
}

// distill no longer falls back to --grid none silently, and --handler/--inputs give the
// student the named teacher's.
func TestDistillUnnamedInputs(t *testing.T) {
	dir := t.TempDir()
	args := func(teacher string, more ...string) []string {
		return append([]string{"distill", teacher, "--samples", "3000", "--trees", "3", "--depth", "3", "--out", filepath.Join(dir, "s.json")}, more...)
	}
	var plain, named, byHandler, byInputs distillJSON
	jsonOf(t, &plain, args(unnamed)...)
	wantNote := "grid none: the teacher's inputs (input[0], input[1], input[2], input[3]) are not named in an RL-CC layout (a_prev, o, a_prev2, o_prev); --handler rlcc (inputs by position, newest state first), or name the inputs: --inputs nicc (newest state first: a_prev,o,a_prev2,o_prev), --inputs authors [--history K --features LIST] (NVlabs/RLCC, oldest first: a_prev2,o_prev,a_prev,o), or the names in the model's order, e.g. --inputs a_prev2,o_prev,a_prev,o puts the thresholds on the RL-CC Q16 grid"
	if plain.Grid != "none" || len(plain.Notes) != 1 || plain.Notes[0] != wantNote {
		t.Errorf("unnamed teacher: grid %q, notes %q; want none and %q", plain.Grid, plain.Notes, wantNote)
	}
	code, stdout, _ := nicc(t, args(unnamed)...)
	if code != exitOK || line(stdout, "note") != "note "+wantNote {
		t.Errorf("text output: exit %d, note line %q", code, line(stdout, "note"))
	}

	jsonOf(t, &named, args(models+"rlcc_teacher.onnx")...)
	jsonOf(t, &byHandler, args(unnamed, "--handler", "rlcc")...)
	jsonOf(t, &byInputs, args(unnamed, "--inputs", rlccInputs)...)
	for name, r := range map[string]distillJSON{"named": named, "--handler rlcc": byHandler, "--inputs": byInputs} {
		if r.Grid != "rlcc" || len(r.Notes) != 0 || string(r.HeldOut) != string(named.HeldOut) {
			t.Errorf("%s: grid %q, notes %q, held-out %s; want rlcc, none, %s", name, r.Grid, r.Notes, r.HeldOut, named.HeldOut)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "s.json"))
	var student struct{ Inputs []string }
	if err == nil {
		err = json.Unmarshal(data, &student)
	}
	if err != nil || strings.Join(student.Inputs, ",") != rlccInputs {
		t.Errorf("the --inputs student's inputs are %q (%v), want %s", student.Inputs, err, rlccInputs)
	}

	var scaled distillJSON
	jsonOf(t, &scaled, args(unnamed, "--handler", "rlcc", "--rlcc-target", "0.1", "--rlcc-scale", "4")...)
	if p := scaled.Params; p == nil || p.Scale != 4 || p.Target != 6554.0/65536 || string(scaled.HeldOut) == string(named.HeldOut) {
		t.Errorf("--rlcc-target 0.1 --rlcc-scale 4: rlcc_params %+v, held-out %s", p, scaled.HeldOut)
	}
}

// compile --target int of the export: the same error naming the flags, and with either flag
// the RL-CC firmware, the parameters in report.json and the summary.
func TestCompileUnnamedInputs(t *testing.T) {
	t.Parallel()
	wantBadInput(t, needsRows, "compile", unnamed, "--target", "int", "--out", t.TempDir())
	base := []string{"--target", "int", "--samples", "1000", "--vectors", "1000"}

	out := t.TempDir()
	code, stdout, stderr := nicc(t, append([]string{"compile", unnamed, "--out", out, "--inputs", rlccInputs, "--rlcc-beta", "2", "--rlcc-init-rate", "0.5"}, base...)...)
	if code != exitOK {
		t.Fatalf("--inputs: exit %d: %s", code, stderr)
	}
	for label, want := range map[string]string{
		"handler": "handler rlcc: nicc_on_event(event, flow context) around nicc_policy(x)",
		"rl-cc":   "rl-cc target 0.064 (default), beta 2 (flag), scale 12 (default), min rate 0.001 (default) and init rate 0.5 (flag) of line rate, base RTT 0 = provisioned by the host at flow start, else learned (default)",
		"inputs":  "inputs a_prev Q16, o Q16, a_prev2 Q16, o_prev Q16",
	} {
		if l := line(stdout, label); l != want {
			t.Errorf("line %q is %q, want %q; output:\n%s", label, l, want, stdout)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Params *rlccParamsJSON `json:"rlcc_params"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Params == nil || rep.Params.Beta != 2 || rep.Params.InitRate != 0.5 || rep.Params.Scale != 12 {
		t.Errorf("report.json rlcc_params %+v (%v)", rep.Params, err)
	}

	code, stdout, stderr = nicc(t, append([]string{"compile", unnamed, "--out", t.TempDir(), "--handler", "rlcc"}, base...)...)
	want := "note inputs (input[0], input[1], input[2], input[3]) taken by position as (a_prev, o, a_prev2, o_prev)"
	if code != exitOK || line(stdout, "note") != want {
		t.Errorf("--handler rlcc: exit %d, note %q, want %q; stderr %s", code, line(stdout, "note"), want, stderr)
	}
}

// Every command that reads a model takes --inputs, with the same one-line error for a wrong
// count; inspect and eval see the new names.
func TestInputsFlag(t *testing.T) {
	want := "nicc: " + unnamed + ": --inputs names 2 inputs (a,b); model rlcc_teacher_unnamed takes 4 (input[0],input[1],input[2],input[3])\n"
	out := t.TempDir()
	for _, args := range [][]string{
		{"inspect", unnamed},
		{"eval", unnamed, "--input", models + "rlcc_teacher.ref.csv"},
		{"compile", unnamed, "--target", "int", "--out", out},
		{"distill", unnamed, "--out", filepath.Join(out, "s.json")},
		{"diff", unnamed},
	} {
		wantBadInput(t, want, append(args, "--inputs", "a,b")...)
	}
	wantBadInput(t, "nicc: --inputs \"a,,b,c\": name 2 is empty\n", "inspect", unnamed, "--inputs", "a,,b,c")
	wantBadInput(t, "nicc: --inputs \"a,b,a,c\": \"a\" is named twice\n", "inspect", unnamed, "--inputs", "a,b,a,c")

	code, stdout, stderr := nicc(t, "inspect", unnamed, "--inputs", rlccInputs)
	if code != exitOK || line(stdout, "inputs") != "inputs 4: a_prev, o, a_prev2, o_prev" {
		t.Errorf("inspect --inputs: exit %d, inputs line %q; stderr %s", code, line(stdout, "inputs"), stderr)
	}
	// The reference CSV's header names a_prev..o_prev and y: with the names the columns are
	// picked by name, and the outputs are the named teacher's.
	ref := models + "rlcc_teacher.ref.csv"
	code, byName, stderr := nicc(t, "eval", unnamed, "--inputs", rlccInputs, "--input", ref)
	_, named, _ := nicc(t, "eval", models+"rlcc_teacher.onnx", "--input", ref)
	if code != exitOK || byName != named || len(named) == 0 {
		t.Errorf("eval --inputs: exit %d, %d bytes of output, want the named teacher's %d; stderr %s", code, len(byName), len(named), stderr)
	}
}

// Bad RL-CC parameters exit 2 with one line naming the flag, on every command that takes them.
func TestRLCCParamFlagsBad(t *testing.T) {
	out := t.TempDir()
	cmds := [][]string{
		{"compile", models + "rlcc_xgb.json", "--out", out},
		{"distill", models + "rlcc_teacher.json", "--out", filepath.Join(out, "s.json")},
		{"diff", models + "rlcc_teacher.json"},
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--rlcc-target", "20"}, "nicc: --rlcc-target 20: nicsdk: rl-cc target 20 is above 16\n"},
		{[]string{"--rlcc-beta", "-1"}, "nicc: --rlcc-beta -1: nicsdk: rl-cc beta -1 is out of range\n"},
		{[]string{"--rlcc-scale", "0"}, "nicc: --rlcc-scale 0: nicsdk: rl-cc scale 0 is not in (0, 256]\n"},
		{[]string{"--rlcc-target", "NaN"}, "nicc: --rlcc-target NaN: nicsdk: rl-cc target NaN is out of range\n"},
		{[]string{"--rlcc-init-rate", "2"}, "nicc: --rlcc-init-rate 2: nicsdk: rl-cc rates: want 0 < min rate (1049) <= init rate (2097152) <= 1048576 (fxp20)\n"},
		{[]string{"--rlcc-min-rate", "0.5", "--rlcc-init-rate", "0.1"}, "nicc: --rlcc-min-rate 0.5 --rlcc-init-rate 0.1: nicsdk: rl-cc rates: want 0 < min rate (524288) <= init rate (104858) <= 1048576 (fxp20)\n"},
		{[]string{"--rlcc-base-rtt", "-1"}, "nicc: --rlcc-base-rtt -1: want 0 (learned) to 1e6 µs\n"},
		{[]string{"--rlcc-base-rtt", "2e6"}, "nicc: --rlcc-base-rtt 2e+06: want 0 (learned) to 1e6 µs\n"},
	} {
		for _, cmd := range cmds {
			wantBadInput(t, c.want, append(append([]string{}, cmd...), c.flags...)...)
		}
	}
}

// --target int8 and --against int8 still work as the old names of int.
func TestIntTargetAlias(t *testing.T) {
	var a, b diffJSON
	jsonOf(t, &a, "diff", models+"rlcc_teacher.json", "--samples", "500", "--against", "int8")
	jsonOf(t, &b, "diff", models+"rlcc_teacher.json", "--samples", "500", "--against", "int")
	if string(a.Stats) != string(b.Stats) {
		t.Errorf("--against int8 %s, int %s", a.Stats, b.Stats)
	}
	code, stdout, stderr := nicc(t, "diff", models+"rlcc_teacher.json", "--samples", "500")
	if code != exitOK || !strings.HasPrefix(line(stdout, "against"), "against int: integer network w16/a16") {
		t.Errorf("diff: exit %d, against line %q; stderr %s", code, line(stdout, "against"), stderr)
	}
}

// --rlcc-base-rtt configures the base RTT the handler starts every flow with: it is in the
// emitted parameters and the report, and the compile verifies (golden == host C == fwsim) with it.
// One compile, the demo policy's trees that TestDiffClosedLoopTreesAt128 runs in closed loop:
// its summary, and its report.json (what --json prints: TestCompileJSON).
func TestCompileBaseRTT(t *testing.T) {
	t.Parallel()
	bc := baseRTTTrees(t)
	code, stdout, stderr, out := bc.code, bc.stdout, bc.stderr, bc.dir
	var r struct {
		Params struct {
			BaseRTT uint32 `json:"base_rtt_ns"`
		} `json:"rlcc_params"`
		Verify struct {
			Mismatches int    `json:"mismatches"`
			Vectors    int    `json:"vectors"`
			UBSan      string `json:"ubsan"`
		} `json:"verify"`
	}
	if code != exitOK || !strings.Contains(stdout, "base RTT 4.02 µs") {
		t.Errorf("text report: exit %d, no base RTT line:\n%s%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "report.json")); err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("report.json: %v", err)
	}
	if v := r.Verify; r.Params.BaseRTT != 4020 || v.Mismatches != 0 || v.Vectors < 5000 || v.UBSan != "clean" {
		t.Errorf("report: base RTT %d ns, verify %+v; want 4020 and 0 mismatches over 5000 vectors, UBSan clean", r.Params.BaseRTT, v)
	}
	c, err := os.ReadFile(filepath.Join(out, "handler.c"))
	if err != nil || !strings.Contains(string(c), ".base_rtt_ns = 4020u,") {
		t.Errorf("handler.c does not set .base_rtt_ns = 4020u: %v", err)
	}
}

// baseRTTTrees is the shared compile of the demo's trained policy distilled to trees, with
// the simulated network's base RTT, 4.02 µs.
func baseRTTTrees(t *testing.T) *compiled {
	t.Helper()
	return sharedCompile(t, models+"rlcc_adpg.json", "--target", "trees", "--rlcc-base-rtt", "4.02", "--vectors", "5000")
}
