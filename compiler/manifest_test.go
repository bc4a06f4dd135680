package compiler

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/target/doca"
)

// reseal rewrites dir's report.json so that its manifest lists the files as they now are: a
// test's stand-in for a compile that wrote them so.
func reseal(t *testing.T, dir string) {
	t.Helper()
	err := editReport(dir, func(r map[string]any) {
		for _, f := range r["manifest"].(map[string]any)["files"].([]any) {
			f := f.(map[string]any)
			p := filepath.Join(dir, filepath.FromSlash(f["path"].(string)))
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if f["sha256"], err = artifact.FileHash(p); err != nil {
				t.Fatal(err)
			}
			f["bytes"] = fi.Size()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// onlyOut fails unless parent holds just out (or nothing, when out is ""): no directory a
// compile works in beside it.
func onlyOut(t *testing.T, parent, out string) {
	t.Helper()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != out {
			t.Errorf("%s left beside the output directory", filepath.Join(parent, e.Name()))
		}
	}
}

// An interrupted compile leaves the old directory byte for byte as it was and nothing beside
// it: cancelled before it starts, as the builds start (gcc stopped, the new sources written),
// as verify starts (the new ELF built), before the DOCA stage, after report.json is written but
// before it is put in place; and into a new directory, it leaves nothing.
func TestCompileInterrupted(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	// The policy alone, built once; the RL-CC handler and the DOCA target only where the DOCA
	// stage is the one cancelled.
	opt := CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, Form: "walk", Vectors: 200, Out: out}
	if _, err := Compile(opt); err != nil {
		t.Fatal(err)
	}
	before := testutil.DirState(t, out)
	cases := []struct {
		stage    string // cancelled before it
		progress string // cancelled as it starts, from inside
	}{
		{stage: "load"}, {progress: "build"}, {progress: "verify"}, {stage: "doca"}, {stage: "commit"},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		o := opt
		o.Seed = 2 // other vectors: a compile that completed would change the files
		if c.stage == "doca" {
			o.Handler, o.SDK = artifact.HandlerRLCC, doca.Target
		}
		o.atStage = func(s string) {
			if s == c.stage {
				cancel()
			}
		}
		o.Progress = func(s string, done, total int) {
			if s == c.progress {
				cancel()
			}
		}
		r, err := CompileContext(ctx, o)
		cancel()
		if want := "compile interrupted: " + out + " left as it was"; r != nil || err == nil || err.Error() != want {
			t.Errorf("%+v: %v, %v; want %q", c, r, err, want)
		}
		if d := cmp.Diff(before, testutil.DirState(t, out)); d != "" {
			t.Errorf("%+v: the old directory changed (-before +after):\n%s", c, d)
		}
		onlyOut(t, parent, "out")
	}
	if _, err := artifact.ReadReport(out, artifact.FirmwareFile); err != nil {
		t.Error(err)
	}

	fresh := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	o := opt
	o.Out = filepath.Join(fresh, "new")
	o.atStage = func(s string) {
		if s == "verify" {
			cancel()
		}
	}
	if _, err := CompileContext(ctx, o); err == nil || err.Error() != "compile interrupted: "+o.Out+" not created" {
		t.Errorf("into a new directory: %v", err)
	}
	onlyOut(t, fresh, "")
}

// Of two compiles into one directory, the second fails at once with one line, and the first
// completes.
func TestCompileConcurrent(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	opt := CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, Form: "walk", Vectors: 200, Out: out}
	at, hold := make(chan struct{}), make(chan struct{})
	first := opt
	first.atStage = func(s string) {
		if s == "build" {
			close(at)
			<-hold
		}
	}
	done := make(chan error)
	go func() {
		_, err := Compile(first)
		done <- err
	}()
	<-at
	_, err := Compile(opt)
	want := out + ": another nicc compile is writing it (" + filepath.Join(parent, ".out.nicc-tmp") + " exists; if none is running, a killed one left it: remove it)"
	if err == nil || err.Error() != want {
		t.Errorf("the second compile: %v; want %q", err, want)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatalf("the first compile: %v", err)
	}
	if _, err := artifact.ReadReport(out, artifact.FirmwareFile); err != nil {
		t.Error(err)
	}
	onlyOut(t, parent, "out")
}

// A compile that stops on bad input, with no report, leaves the old directory as it was; a
// failed check replaces it whole with the failure's report and what was written before the
// check failed, which no reader takes for verified.
func TestCompileFailureReplacesWhole(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	opt := CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, Form: "walk", Vectors: 200, Out: out}
	if _, err := Compile(opt); err != nil {
		t.Fatal(err)
	}
	before := testutil.DirState(t, out)
	bad := opt
	bad.Model = "../testdata/models/rlcc_teacher.onnx" // a network without --target: bad input
	if r, err := Compile(bad); r != nil || err == nil || !strings.Contains(err.Error(), "nicc compile takes tree ensembles") {
		t.Fatalf("bad input: %v, %v", r, err)
	}
	if d := cmp.Diff(before, testutil.DirState(t, out)); d != "" {
		t.Errorf("bad input changed the old directory (-before +after):\n%s", d)
	}
	failing := opt
	failing.tamper = func(dir string) error {
		p := filepath.Join(dir, "nicc_policy.c")
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, append([]byte("#define NICC_SNEAKY 1\n"), b...), 0o644)
	}
	r, err := Compile(failing)
	var ce *budget.CheckError
	if !errors.As(err, &ce) || r == nil || r.Failure == nil || r.Failure.Stage != "build" {
		t.Fatalf("failed check: %v, %+v", err, r)
	}
	if _, err := os.Stat(filepath.Join(out, artifact.FirmwareFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old firmware sits beside the failed compile's report: %v", err)
	}
	if r.Manifest.Verdicts.Verify != artifact.VerdictNotRun {
		t.Errorf("verdicts %+v", r.Manifest.Verdicts)
	}
	_, err = artifact.ReadReport(out)
	if want := filepath.Join(out, artifact.ReportFile) + ": the compile did not pass verify (it failed at build: check): nothing in it is verified; compile again"; err == nil || err.Error() != want {
		t.Errorf("reading the failed compile: %v; want %q", err, want)
	}
	onlyOut(t, parent, "out")
}

// What ReadReport refuses, each in one line naming the file: a file swapped in from another
// compile, edited in place, replaced by a link to the same bytes, or gone; a report with no
// manifest (an older nicc); a manifest naming a file outside the directory.
func TestReadReportChecksManifest(t *testing.T) {
	t.Parallel()
	_, src := compileOnce(t, "manifest-none", CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, Form: "walk"})
	_, other := compileOnce(t, "manifest-rlcc", CompileOptions{Model: rlccXGB, Form: "walk"})
	copyDir := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "c")
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		name string
		edit func(dir string) error
		want string // after the directory's path
	}{
		{"swapped", func(dir string) error {
			b, err := os.ReadFile(filepath.Join(other, artifact.FirmwareFile))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, artifact.FirmwareFile), b, 0o644)
		}, "/firmware.elf: changed since nicc compile wrote it ("},
		{"edited", func(dir string) error {
			p := filepath.Join(dir, artifact.VectorsFile)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)-2] ^= 1
			return os.WriteFile(p, b, 0o644)
		}, "/vectors.txt: changed since nicc compile wrote it (sha256 "},
		{"linked", func(dir string) error {
			p := filepath.Join(dir, artifact.FirmwareFile)
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(src, artifact.FirmwareFile), p)
		}, "/firmware.elf: not the regular file report.json lists (a link or another kind of file); compile again"},
		{"gone", func(dir string) error { return os.Remove(filepath.Join(dir, "host", "driver-ubsan")) },
			"/host/driver-ubsan: missing; report.json lists it: compile again"},
		{"older", func(dir string) error {
			return editReport(dir, func(r map[string]any) { delete(r, "manifest") })
		}, "/report.json: lists no files (written by an older nicc): compile again"},
		{"outside", func(dir string) error {
			return editReport(dir, func(r map[string]any) {
				f := r["manifest"].(map[string]any)["files"].([]any)[0].(map[string]any)
				f["path"] = "../c/firmware.elf"
			})
		}, `/report.json: manifest: "../c/firmware.elf" is not a file a compile writes`},
	}
	for _, c := range cases {
		dir := copyDir(t)
		if _, err := artifact.ReadReport(dir, artifact.FirmwareFile); err != nil {
			t.Fatalf("%s: the copy: %v", c.name, err)
		}
		if err := c.edit(dir); err != nil {
			t.Fatal(err)
		}
		_, err := artifact.ReadReport(dir, artifact.FirmwareFile)
		if err == nil || !strings.HasPrefix(err.Error(), dir+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line %q", c.name, err, dir+c.want)
		}
	}
	if _, err := artifact.ReadReport(copyDir(t), artifact.DOCAFirmwareFile); err == nil || !strings.Contains(err.Error(), "compiled without --sdk doca") {
		t.Errorf("a DOCA program asked of a compile without one: %v", err)
	}
}

// editReport edits dir's report.json as JSON.
func editReport(dir string, edit func(r map[string]any)) error {
	p := filepath.Join(dir, artifact.ReportFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	edit(r)
	if b, err = json.Marshal(r); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
