package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// flagRef is a flag named in a message: --name, not a negative number or a bare "--".
var flagRef = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// definedFlags are the names (aliases too) of the flags nicc's command path defines.
func definedFlags(t *testing.T, path ...string) map[string]bool {
	t.Helper()
	cmd := newApp().Command(path[0])
	for _, sub := range path[1:] {
		cmd = cmd.Command(sub)
	}
	if cmd == nil {
		t.Fatalf("no command %v", path)
	}
	names := map[string]bool{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			names[n] = true
		}
	}
	return names
}

// A refusal that tells the user which flag fixes it names only flags the command has: sim and
// diff --closed-loop suggested --handler rlcc, which diff --closed-loop refuses (issue 26).
// Each case is the model whose inputs are not named the RL-CC window; every --flag in the
// one-line error must be one the command defines, and the allowed ones only.
func TestHintsNameOnlyTheCommandsFlags(t *testing.T) {
	t.Parallel()
	xgb := rlccXGB(t) // the compile TestCompileRLCC reads
	for _, tc := range []struct {
		args    []string
		want    string // a fragment of the error
		without string // a flag the hint must not name, "" for none
	}{
		{[]string{"sim", "many-to-one", "--flows", "2", "--duration", "1ms", "--policy", unnamed}, "--handler rlcc (inputs by position, newest state first), or name the inputs: --inputs nicc", ""},
		{[]string{"diff", models + "xgb_small.json", "--closed-loop", "--against", xgb.dir, "--runs", "many-to-one:2", "--duration", "1ms"}, "xgb_small", "--handler"},
		{[]string{"diff", unnamed, "--samples", "100"}, "sample RL-CC states with --handler rlcc", ""},
		{[]string{"compile", unnamed, "--target", "int", "--out", t.TempDir() + "/int"}, "sample RL-CC states with --handler rlcc", ""},
	} {
		code, _, stderr := nicc(t, tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
			continue
		}
		if tc.without != "" && strings.Contains(stderr, tc.without) {
			t.Errorf("%v: %q names %s, which the command refuses", tc.args, stderr, tc.without)
		}
		flags := definedFlags(t, tc.args[0])
		for _, m := range flagRef.FindAllStringSubmatch(stderr, -1) {
			if !flags[m[1]] {
				t.Errorf("%v: the error names --%s, which nicc %s does not define: %s", tc.args, m[1], tc.args[0], stderr)
			}
		}
	}
}

// nicc sim --handler means what compile's means: rlcc reads an unnamed 4-input model as the
// RL-CC window by position, and then runs it exactly as --inputs naming it does; none is
// refused (a model decides only as an RL-CC policy), and so is --handler with a policy that
// is not a model file. (Before, sim had no --handler and suggested it.)
func TestSimHandler(t *testing.T) {
	run := []string{"sim", "many-to-one", "--flows", "2", "--duration", "2ms", "--json"}
	code, byHandler, stderr := nicc(t, append(run, "--policy", unnamed, "--handler", "rlcc")...)
	if code != exitOK {
		t.Fatalf("--handler rlcc: exit %d: %s", code, stderr)
	}
	code, byInputs, stderr := nicc(t, append(run, "--policy", unnamed, "--inputs", rlccInputs)...)
	if code != exitOK {
		t.Fatalf("--inputs: exit %d: %s", code, stderr)
	}
	// The policy's hash is of the model as read, input names included, and the layout record
	// says how the names were read: the two fields that differ. The run is the same.
	var h, i map[string]any
	if err := json.Unmarshal([]byte(byHandler), &h); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(byInputs), &i); err != nil {
		t.Fatal(err)
	}
	if h["rlcc_layout"].(map[string]any)["by_position"] != true {
		t.Errorf("--handler rlcc: layout %v, want by_position", h["rlcc_layout"])
	}
	for _, k := range []string{"policy_sha256", "rlcc_layout"} {
		delete(h, k)
		delete(i, k)
	}
	if d := cmp.Diff(h, i); d != "" {
		t.Errorf("--handler rlcc and --inputs %s run differently (-handler +inputs):\n%s", rlccInputs, d)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", unnamed, "--handler", "none"}, "--handler none: a model decides in nicc sim only as an RL-CC policy"},
		{[]string{"--policy", "swift", "--handler", "rlcc"}, "--handler rlcc reads a model file's inputs; policy swift is not a model file"},
		{[]string{"--policy", models + "xgb_small.json", "--handler", "rlcc"}, "has 2 inputs, narrower than the RL-CC handler's 4 (a_prev, o, a_prev2, o_prev); name its inputs"},
		{[]string{"--policy", unnamed, "--handler", "trees"}, "--handler: unknown handler \"trees\""},
	} {
		code, _, stderr := nicc(t, append(run[:6], tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
