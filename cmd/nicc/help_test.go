package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBareNiccPrintsUsageAndExits2(t *testing.T) {
	code, stdout, stderr := nicc(t)
	if code != exitBadInput || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want exit 2 and nothing on stdout", code, stdout)
	}
	if !strings.Contains(stderr, "USAGE:\n   nicc [global options] command [command options]") ||
		!strings.HasSuffix(stderr, "\nnicc: no command given (want one of inspect, eval, budget, compile, prove, distill, diff, sim, train, agent)\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	code, stdout, stderr = nicc(t, "frobnicate")
	if code != exitBadInput || stdout != "" || stderr != "nicc: unknown command \"frobnicate\" (want one of inspect, eval, budget, compile, prove, distill, diff, sim, train, agent; nicc --help)\n" {
		t.Errorf("unknown command: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestVersion(t *testing.T) {
	want := "nicc version " + version(debug.ReadBuildInfo()) + "\n"
	for _, flag := range []string{"--version", "-v"} {
		code, stdout, stderr := nicc(t, flag)
		if code != exitOK || stdout != want || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", flag, code, stdout, stderr, want)
		}
	}
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "v1.2.3"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101000000-0123456789ab+dirty"}, Settings: vcs("0123456789abcdef", "true")}, true, "v0.0.0-20260101000000-0123456789ab+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef", "true")}, true, "0123456789abcdef-dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: ""}, Settings: vcs("0123456789abcdef", "false")}, true, "0123456789abcdef"},
	} {
		if got := version(c.bi, c.ok); got != c.want {
			t.Errorf("version(%+v, %v) = %q, want %q", c.bi, c.ok, got, c.want)
		}
	}
}

// helpOf runs `nicc CMD --help` and returns its output.
func helpOf(t *testing.T, cmd string) string {
	t.Helper()
	code, stdout, stderr := nicc(t, cmd, "--help")
	if code != exitOK || stderr != "" {
		t.Fatalf("%s --help: exit %d, stderr %q", cmd, code, stderr)
	}
	return stdout
}

// flagLine is the help line of flag --name.
func flagLine(help, name string) string {
	_, opts, _ := strings.Cut(help, "\nOPTIONS:\n")
	for _, l := range strings.Split(opts, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--"+name+" ") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

func TestHelpShowsOneDefaultPerFlag(t *testing.T) {
	for _, cmd := range newApp().Commands {
		help := helpOf(t, cmd.Name)
		for _, f := range cmd.Flags {
			l := flagLine(help, f.Names()[0])
			if l == "" {
				t.Errorf("%s --help has no line for --%s", cmd.Name, f.Names()[0])
			}
			if n := strings.Count(l, "(default"); n > 1 {
				t.Errorf("%s --help shows %d defaults: %s", cmd.Name, n, l)
			}
		}
	}
	compile := helpOf(t, "compile")
	for name, want := range map[string]string{
		"weight-bits": "--weight-bits value --target int: weight width, 8 or 16 (16 when only --act-bits is given) (default: chosen by the measured error)",
		"threads":     "--threads value hardware threads sharing the pipeline (a decision's time is its cycles × threads / clock) (default: the profile's)",
		"samples":     "(default: 200000 for --target trees, 20000 for --target int)",
		"num-vectors": "--num-vectors N verify compares at least N calls (nicc budget --vectors is a file of calls) (default: 100000)",
	} {
		if l := flagLine(compile, name); !strings.Contains(l, want) {
			t.Errorf("compile --%s: %q, want it to contain %q", name, l, want)
		}
	}
	if l := flagLine(helpOf(t, "budget"), "vectors"); !strings.HasPrefix(l, "--vectors FILE FILE of calls to run and measure") || !strings.Contains(l, "nicc compile --num-vectors is how many calls verify compares") {
		t.Errorf("budget --vectors: %q", l)
	}
	distill := helpOf(t, "distill")
	for name, want := range map[string]string{
		"samples":       "(default: 200000)",
		"learning-rate": "(default: 0.5)",
		"refit":         "--refit=false turns it off (default: true)",
	} {
		if l := flagLine(distill, name); !strings.HasSuffix(l, want) {
			t.Errorf("distill --%s: %q, want it to end in %q", name, l, want)
		}
	}
}

// compile's summary covers networks, and its examples include --target int.
func TestCompileHelpCoversNetworks(t *testing.T) {
	code, stdout, _ := nicc(t, "--help")
	if code != exitOK || strings.Contains(stdout, "compile a tree ensemble") ||
		!strings.Contains(stdout, "compile a policy into verified NIC firmware (a tree ensemble as it is, a network with --target int or --target trees)") {
		t.Errorf("nicc --help:\n%s", stdout)
	}
	help := helpOf(t, "compile")
	if !regexp.MustCompile(`(?m)^ +nicc compile testdata/models/rlcc_teacher\.json --out build/teacher --target int$`).MatchString(help) ||
		!regexp.MustCompile(`(?m)^ +nicc compile testdata/models/rlcc_lstm\.onnx --out build/lstm --target int$`).MatchString(help) {
		t.Errorf("compile --help has no --target int example:\n%s", help)
	}
}

func TestDiffSaysWhatItNeeds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", models + "rlcc_xgb.json"},
			models + "rlcc_xgb.json: model rlcc_xgb is a tree ensemble, and diff --against int (the default) needs a neural teacher (a dense or LSTM network) to quantize; to compare tree models, give the other one with --against FILE"},
		{[]string{"diff", models + "rlcc_teacher.json", "--against", "int4"},
			`--against "int4": want int (or int8), trees, or a student model file, and there is no file int4`},
	} {
		code, stdout, stderr := nicc(t, c.args...)
		if code != exitBadInput || stdout != "" || stderr != "nicc: "+c.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	// A tree teacher compares against a model file.
	code, stdout, stderr := nicc(t, "diff", models+"rlcc_xgb.json", "--against", models+"rlcc_xgb.json", "--samples", "100")
	if code != exitOK || line(stdout, "against") != "against "+models+"rlcc_xgb.json: tree ensemble rlcc_xgb ("+models+"rlcc_xgb.json), as its integer IR on the RL-CC Q16 grid (Q16 output)" {
		t.Errorf("trees against themselves: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
}

// A file nicc cannot read says which format it was read as, and why, before the reader's
// detail (a CatBoost model nicc refuses: what it holds); a PyTorch, pickle or CatBoost binary
// file gets what to do instead.
func TestLoadErrorsNameTheFormat(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badONNX := file("bad.onnx", "\x78\x79garbage")
	badJSON := file("bad.json", `{"foo": 1}`)
	badLGB := file("model.txt", "tree\nfoo=bar\n")
	pt := file("policy.pt", "PK\x03\x04 not onnx")
	pth := file("policy.pth", "PK\x03\x04 not onnx")
	pkl := file("model.pkl", "\x80\x04\x95")
	cbm := file("model.cbm", "CBM1")
	cbText := file("text.json", `{"features_info":{"text_features":[{}],"float_features":[{"borders":[0]}]},"oblivious_trees":[]}`)
	const torch = `a PyTorch file, which nicc does not read: export the model to ONNX with torch.onnx.export(model, example_input, "policy.onnx") and give nicc the .onnx`
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", badONNX}, badONNX + ": read as ONNX (by its .onnx extension): offset 2: field 12 has unexpected wire type 7"},
		{[]string{"inspect", badJSON}, badJSON + `: read as nicc JSON (by its .json extension, with no XGBoost learner object and no CatBoost trees): offset 10: json: unknown field "foo"`},
		{[]string{"inspect", "--format", "xgboost", badJSON}, badJSON + `: read as XGBoost (by --format xgboost): not an XGBoost JSON model: no "learner" object`},
		{[]string{"inspect", badLGB}, badLGB + ": read as LightGBM (by its first line, tree): offset 13: line 3: the header has no version"},
		{[]string{"inspect", pt}, pt + ": " + torch},
		{[]string{"compile", pth, "--out", t.TempDir()}, pth + ": " + torch},
		{[]string{"inspect", pkl}, pkl + `: a Python pickle, which nicc does not read: save an XGBoost booster with save_model("model.json"), a LightGBM one with save_model("model.txt"), a PyTorch model with torch.onnx.export`},
		{[]string{"inspect", cbText}, cbText + ": read as CatBoost (by its content: CatBoost's features_info and trees): the model has text features (1); nicc reads models over float features only"},
		{[]string{"inspect", cbm}, cbm + ": a CatBoost binary model, which nicc does not read: save the model as JSON with save_model(\"model.json\", format=\"json\")"},
	} {
		code, stdout, stderr := nicc(t, c.args...)
		if code != exitBadInput || stdout != "" || stderr != "nicc: "+c.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q,\nstderr %q\nwant   %q", c.args, code, stdout, stderr, "nicc: "+c.want+"\n")
		}
	}
	// protobuf's own text varies its spaces on purpose: match around it.
	code, stdout, stderr := nicc(t, "inspect", "--format", "onnx", pt)
	if code != exitBadInput || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.HasPrefix(stderr, "nicc: "+pt+": read as ONNX (by --format onnx): offset 2: bad field tag: proto:") ||
		!strings.HasSuffix(stderr, "invalid field number; a .pt file is "+torch+"\n") {
		t.Errorf("--format onnx on a .pt file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A usage error is one line on stderr, nothing on stdout, exit 2: the flag the command does
// not define, and the nearest one it does when that is a slip.
func TestUsageErrorOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--flowz", "3"}, "nicc: sim: no flag --flowz; did you mean --flows? (nicc sim --help lists them)"},
		{[]string{"compile", "--vector", "5", "x"}, "nicc: compile: no flag --vector; did you mean --num-vectors? (nicc compile --help lists them)"},
		{[]string{"diff", "--closedloop"}, "nicc: diff: no flag --closedloop; did you mean --closed-loop? (nicc diff --help lists them)"},
		{[]string{"sim", "merge", "--jsn", "a.json"}, "nicc: sim merge: no flag --jsn; did you mean --json? (nicc sim merge --help lists them)"},
		{[]string{"budget", "--list-core"}, "nicc: budget: no flag --list-core; did you mean --list-cores? (nicc budget --help lists them)"},
		{[]string{"sim", "--xyzzyq"}, "nicc: sim: no flag --xyzzyq (nicc sim --help lists them)"},
		{[]string{"--bogus"}, "nicc: no flag --bogus (nicc --help lists them)"},
		{[]string{"sim", "--flows"}, "nicc: sim: --flows needs a value (nicc sim --help)"},
	} {
		code, stdout, stderr := nicc(t, c.args...)
		if code != exitBadInput || stdout != "" || stderr != c.want+"\n" {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, no stdout and %q", c.args, code, len(stdout), stderr, c.want)
		}
	}
}
