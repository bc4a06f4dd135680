package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/internal/testutil"
)

// TestMain runs the CLI itself when NICC_TEST_MAIN is set: the interrupt test's nicc process.
func TestMain(m *testing.M) {
	if os.Getenv("NICC_TEST_MAIN") == "1" {
		os.Exit(run(append([]string{"nicc"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(runShared(m))
}

// Every reader of a compile directory refuses a file that is not the one compile wrote: a
// firmware.elf copied in from another compile, or its ELF copied in as doca_firmware.elf,
// either edited in place, the vectors budget re-runs edited, a report from before manifests;
// one line naming the file, exit 2.
func TestReadersRefuseChangedCompileDir(t *testing.T) {
	t.Parallel()
	// Two compiles of different firmware (a under the RL-CC handler with its DOCA program,
	// shared with TestSimSDKDOCA; b the model alone, --handler none, whose firmware.elf differs
	// from both of a's ELFs: shared with TestBudgetCSVVectors): each attack is on a copy of a.
	a, b := compileDir(t, models+"rlcc_xgb.json", "--sdk", "doca", "--form", "walk"), compileDir(t, models+"rlcc_xgb.json", "--handler", "none", "--form", "walk")
	if code, _, errOut := nicc(t, "budget", a); code != exitOK {
		t.Fatalf("budget of the compile: exit %d: %s", code, errOut)
	}
	copyFrom := func(name string) func(dir string) error {
		return func(dir string) error {
			data, err := os.ReadFile(filepath.Join(b, "firmware.elf"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name), data, 0o755)
		}
	}
	flip := func(name string) func(dir string) error {
		return func(dir string) error {
			p := filepath.Join(dir, name)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			data[len(data)/2] ^= 0x10
			return os.WriteFile(p, data, 0o755)
		}
	}
	rows := models + "rlcc_teacher.ref.csv"
	readers := [][]string{
		{"eval", "DIR", "--input", rows},
		{"budget", "DIR"},
		{"sim", "many-to-one", "--flows", "2", "--duration", "1ms", "--policy", "DIR"},
		{"sim", "many-to-one", "--flows", "2", "--duration", "1ms", "--policy", "DIR", "--sdk", "doca"},
		{"diff", models + "rlcc_xgb.json", "--closed-loop", "--against", "DIR", "--runs", "many-to-one:2", "--duration", "1ms"},
		{"diff", models + "rlcc_xgb.json", "--closed-loop", "--against", "DIR", "--runs", "many-to-one:2", "--duration", "1ms", "--sdk", "doca"},
	}
	for _, c := range []struct {
		name   string
		attack func(dir string) error
		want   string // the message after "nicc: DIR"
	}{
		{"firmware.elf swapped", copyFrom("firmware.elf"), "/firmware.elf: changed since nicc compile wrote it ("},
		{"doca_firmware.elf swapped", copyFrom("doca_firmware.elf"), "/doca_firmware.elf: changed since nicc compile wrote it ("},
		{"firmware.elf edited", flip("firmware.elf"), "/firmware.elf: changed since nicc compile wrote it (sha256 "},
		{"doca_firmware.elf edited", flip("doca_firmware.elf"), "/doca_firmware.elf: changed since nicc compile wrote it (sha256 "},
		{"vectors.txt edited", flip("vectors.txt"), "/vectors.txt: changed since nicc compile wrote it (sha256 "},
		{"report from an older nicc", func(dir string) error {
			return editReport(dir, func(r map[string]any) error { delete(r, "manifest"); return nil })
		}, "/report.json: lists no files (written by an older nicc): compile again"},
	} {
		dir := filepath.Join(t.TempDir(), "c")
		if err := os.CopyFS(dir, os.DirFS(a)); err != nil {
			t.Fatal(err)
		}
		if err := c.attack(dir); err != nil {
			t.Fatal(err)
		}
		for _, r := range readers {
			args := make([]string, len(r))
			for i, a := range r {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			code, _, errOut := nicc(t, args...)
			if code != exitBadInput || !strings.HasPrefix(errOut, "nicc: "+dir+c.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s: nicc %s %s: exit %d, %q; want exit 2 and one line %q", c.name, r[0], strings.Join(r[1:], " "), code, errOut, "nicc: "+dir+c.want)
			}
		}
	}
}

// --out must name a directory compile may replace whole: one line and exit 2 otherwise, and
// nothing written.
func TestCompileOutRefused(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	other := filepath.Join(parent, "other")
	link := filepath.Join(parent, "link")
	for _, err := range []error{os.WriteFile(file, []byte("x"), 0o644), os.Mkdir(other, 0o755),
		os.WriteFile(filepath.Join(other, "keep.txt"), []byte("keep"), 0o644), os.Symlink(other, link)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	before := testutil.DirState(t, parent)
	model := filepath.Join(other, "m.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "-foo"}, `nicc: --out "-foo" starts with '-' and would read as an option (write ./-foo for a directory of that name)`},
		{[]string{"--out", "-foo", "--target", "trees"}, `nicc: --out "-foo" starts with '-'`},
		{[]string{"--out", "/"}, `nicc: --out "/": compile replaces its output directory whole; give a directory of its own, by name, not /`},
		{[]string{"--out", "."}, `nicc: --out ".": compile replaces its output directory whole`},
		{[]string{"--out", "x/.."}, `nicc: --out "x/..": compile replaces its output directory whole; give a directory of its own, by name, not .`},
		{[]string{"--out", ".."}, `nicc: --out "..": compile replaces its output directory whole`},
		{[]string{"--out", ""}, `nicc: compile needs --out DIR`},
		{[]string{"--out", file}, "nicc: " + file + " exists and is not a directory"},
		{[]string{"--out", other}, "nicc: " + other + " is a directory of other files (no report.json): compile replaces its output directory whole; give a new or empty directory"},
		{[]string{"--out", link}, "nicc: " + link + " is a symbolic link; nicc does not write through links (give the real directory)"},
		{[]string{"--out", other, "--ranges", filepath.Join(other, "keep.txt"), "--handler", "none"}, "nicc: --ranges " + filepath.Join(other, "keep.txt") + " lies inside --out " + other + ", which compile replaces whole: move it out first"},
	} {
		code, _, errOut := nicc(t, append([]string{"compile", models + "rlcc_xgb.json", "--vectors", "200"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "nicc: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := nicc(t, "compile", model, "--out", other); code != exitBadInput || !strings.Contains(errOut, "the model "+model+" lies inside --out") {
		t.Errorf("a model inside --out: exit %d, %q", code, errOut)
	}
	if d := cmp.Diff(before, testutil.DirState(t, parent)); d != "" {
		t.Errorf("a refused compile wrote (-before +after):\n%s", d)
	}
	if _, err := os.Stat("-foo"); !os.IsNotExist(err) {
		t.Errorf("--out -foo: %v", err)
	}
}

// SIGINT stops a recompile into a good directory: nicc exits 2 with one line, the directory is
// as it was, byte for byte, and nothing is left beside it or in TMPDIR.
func TestCompileSIGINT(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out") // a copy of the shared compile: this test recompiles into it
	if err := os.CopyFS(out, os.DirFS(rlccXGB(t).dir)); err != nil {
		t.Fatal(err)
	}
	before := testutil.DirState(t, out)
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "compile", models+"rlcc_xgb.json", "--out", out, "--seed", "2")
	cmd.Env = append(os.Environ(), "NICC_TEST_MAIN=1", "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Signal as soon as the compile has begun writing: its fresh directory beside out.
	staging := filepath.Join(parent, ".out.nicc-tmp")
	var err error
wait:
	for {
		select {
		case err = <-exited:
			t.Fatalf("nicc compile ended (%v) before its directory beside --out appeared: %s", err, stderr.String())
		default:
			if _, serr := os.Stat(staging); serr == nil {
				break wait
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	if want := "nicc: compile interrupted: " + out + " left as it was\n"; cmd.ProcessState.ExitCode() != exitBadInput || stderr.String() != want {
		t.Errorf("exit %d (%v), stderr %q; want exit 2 and %q", cmd.ProcessState.ExitCode(), err, stderr.String(), want)
	}
	if d := cmp.Diff(before, testutil.DirState(t, out)); d != "" {
		t.Errorf("the old directory changed (-before +after):\n%s", d)
	}
	for dir, want := range map[string]int{parent: 1, tmp: 0} {
		if ents, _ := os.ReadDir(dir); len(ents) != want {
			t.Errorf("%s holds %d entries after the interrupt, want %d: %v", dir, len(ents), want, ents)
		}
	}
	if code, _, errOut := nicc(t, "budget", out); code != exitOK {
		t.Errorf("budget of the old directory: exit %d: %s", code, errOut)
	}
}

// reseal rewrites dir's report.json so that its manifest lists the files as they now are: a
// test's stand-in for a compile that wrote them so.
func reseal(t *testing.T, dir string) {
	t.Helper()
	err := editReport(dir, func(r map[string]any) error {
		for _, f := range r["manifest"].(map[string]any)["files"].([]any) {
			f := f.(map[string]any)
			b, err := os.ReadFile(filepath.Join(dir, f["path"].(string)))
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			f["sha256"], f["bytes"] = hex.EncodeToString(h[:]), len(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// editReport rewrites dir's report.json as edit leaves it, decoded as JSON objects.
func editReport(dir string, edit func(map[string]any) error) error {
	p := filepath.Join(dir, "report.json")
	var r map[string]any
	data, err := os.ReadFile(p)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err == nil {
		err = edit(r)
	}
	if err != nil {
		return err
	}
	data, _ = json.Marshal(r)
	return os.WriteFile(p, data, 0o644)
}
