package compiler

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/buildcache"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/model/modeltest"
	"github.com/nicc-dev/nicc/nicsdk"
)

// Stage-level tests: each stage through its own types, without a whole compile.

// render is a function of its arguments: the same policy and plan print the same C, the
// handler and the form come from the plan alone, the model file's names reach the C only
// inside comments, and the C builds with the strict host flags.
func TestRenderStage(t *testing.T) {
	m := modeltest.Trees("m */ evil(); /*", modeltest.RLCCInputs, 3, 2, 1)
	ir := q12(t, m)
	none := codePlan{form: codegen.FormBranch, handler: artifact.HandlerNone}
	rlccPlan := codePlan{form: codegen.FormBranch, handler: artifact.HandlerRLCC, params: nicsdk.DefaultParams(), layout: nicsdk.DefaultLayout}
	a, err := render(ir, none, fileNames)
	if err != nil {
		t.Fatal(err)
	}
	b, err := render(ir, none, fileNames)
	if err != nil {
		t.Fatal(err)
	}
	if hashSources(a.sources()) != hashSources(b.sources()) {
		t.Error("two renders of one policy and plan differ")
	}
	if a.handler != nil {
		t.Error("HandlerNone rendered a handler")
	}
	neutral, err := render(ir, none, neutralNames)
	if err != nil {
		t.Fatal(err)
	}
	for n, src := range a.sources() {
		if err := sameCode(n, src, neutral.sources()[n]); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if bytes.Contains(neutral.sources()[n], []byte("evil")) {
			t.Errorf("%s: the neutral render holds the model's name", n)
		}
	}
	r, err := render(ir, rlccPlan, fileNames)
	if err != nil {
		t.Fatal(err)
	}
	if r.handler == nil || !bytes.Contains(r.handler, []byte(`#include "`+r.policy.SourceName+`"`)) || !bytes.Contains(r.handler, []byte(artifact.EntryHandler)) {
		t.Errorf("the RL-CC plan's handler.c does not wrap the policy:\n%s", r.handler)
	}
	if bytes.Equal(r.policy.Source, a.policy.Source) {
		t.Error("the RL-CC plan renders the policy as HandlerNone does (no inlined form)")
	}
	walk, err := render(ir, codePlan{form: codegen.FormWalk, handler: artifact.HandlerNone}, fileNames)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(walk.policy.Source, a.policy.Source) {
		t.Error("the walk and branch forms render the same C")
	}
	dir := t.TempDir()
	for n, src := range a.sources() {
		if err := os.WriteFile(filepath.Join(dir, n), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append(append([]string{}, HostFlags...), "-c", "-o", filepath.Join(dir, "p.o"), filepath.Join(dir, a.policy.SourceName))
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// fit's choice over given candidates: fitting the memory budget first, then the least WCET,
// then the smaller firmware.
func TestFitChoosesBetter(t *testing.T) {
	fits := artifact.FormCandidate{Form: "branch", WCETCycles: 300, TextBytes: 900, Fits: true}
	for _, c := range []struct {
		name string
		a, b artifact.FormCandidate
		want bool
	}{
		{"fits beats faster", fits, artifact.FormCandidate{WCETCycles: 100, Fits: false}, true},
		{"faster wins", artifact.FormCandidate{WCETCycles: 299, TextBytes: 5000, Fits: true}, fits, true},
		{"slower loses", artifact.FormCandidate{WCETCycles: 301, Fits: true}, fits, false},
		{"tie: smaller wins", artifact.FormCandidate{WCETCycles: 300, TextBytes: 800, RodataBytes: 99, Fits: true}, fits, true},
		{"tie: same size loses", fits, fits, false},
	} {
		if got := better(c.a, c.b); got != c.want {
			t.Errorf("%s: better = %v", c.name, got)
		}
	}
}

// build reuses fit's firmware only when the sources emit wrote are byte for byte those fit
// built it from.
func TestFormBuildBuiltAs(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"handler.c": []byte("int x;\n"), "nicc_policy.c": []byte("int y;\n")}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fb := &formBuild{files: files}
	names := []string{"handler.c", "nicc_policy.c"}
	if !fb.builtAs(dir, names) {
		t.Fatal("the same sources are not the ones built")
	}
	if fb.builtAs(dir, append(names, "rlcc.h")) {
		t.Error("a source fit did not build counts as built")
	}
	if err := os.WriteFile(filepath.Join(dir, "handler.c"), []byte("int x; /* */\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fb.builtAs(dir, names) {
		t.Error("an edited source counts as built")
	}
}

// build takes the chosen form's firmware from fit instead of building it again: it is byte
// for byte what building the emitted sources gives, and budget's WCET taken from fit is the
// one nicc budget analyses on it afresh.
func TestBuildReusesFitFirmware(t *testing.T) {
	t.Parallel()
	r, dir := rlccReport(t)
	if len(r.Build.Candidates) < 2 {
		t.Fatalf("%d candidates: fit chose nothing, so build reused nothing", len(r.Build.Candidates))
	}
	extra := slices.Clone(FirmwareWarnFlags)
	if i := slices.Index(extra, "-O2"); i >= 0 {
		extra = slices.Concat(extra[:i], r.Build.Opt, extra[i+1:])
	}
	elf := filepath.Join(t.TempDir(), artifact.FirmwareFile)
	if err := nicsdk.Build(elf, filepath.Join(dir, nicsdk.LinkerScriptName), append(extra, "-I", dir), filepath.Join(dir, artifact.HandlerFile)); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, artifact.FirmwareFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the compile's firmware.elf is not what its sources build")
	}
	b, err := budget.Analyze(budget.Options{ELF: filepath.Join(dir, artifact.FirmwareFile), Entry: artifact.EntryHandler, Core: r.Budget.Core.Name})
	if err != nil {
		t.Fatal(err)
	}
	if b.WCETCycles != r.Budget.WCETCycles || b.WCETInsns != r.Budget.WCETInsns {
		t.Errorf("WCET %d cycles, %d insns analysed afresh; the compile reported %d, %d", b.WCETCycles, b.WCETInsns, r.Budget.WCETCycles, r.Budget.WCETInsns)
	}
}

// The budget stage on a compile's firmware and the calls it measured gives that compile's
// bounds and measured cycles, and writes its vector files byte for byte. An error (no ELF)
// still gives the vector files written before it, for the failure's report.
func TestBudgetStage(t *testing.T) {
	t.Parallel()
	r, dir := compileOnce(t, "manifest-rlcc", CompileOptions{Model: rlccXGB, Form: "walk"})
	read := func(name string) ([]budget.Vector, []byte) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := budget.ReadVectors(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return vs, b
	}
	measure, vectors := read(artifact.VectorsFile)
	policy, policyVectors := read(artifact.PolicyVectorsFile)
	in := budgetInput{dir: t.TempDir(), elf: filepath.Join(dir, artifact.FirmwareFile), out: "OUT", entry: artifact.EntryHandler,
		measure: measure, boundPolicy: true, policy: policy}
	got, err := budgetStage(in)
	if err != nil {
		t.Fatal(err)
	}
	if b := got.budget; b.WCETCycles != r.Budget.WCETCycles || b.Measured == nil || b.Measured.MaxCycles != r.Budget.Measured.MaxCycles ||
		b.ELF != filepath.Join("OUT", artifact.FirmwareFile) || !b.Fits {
		t.Errorf("budget %+v, the compile's %+v", b, r.Budget)
	}
	if got.policy == nil || got.policy.WCETCycles != r.PolicyAlone.WCETCycles {
		t.Errorf("policy alone %+v, the compile's %+v", got.policy, r.PolicyAlone)
	}
	if !slices.Equal(got.vectorFiles, r.VectorFiles) {
		t.Errorf("vector files %+v, the compile's %+v", got.vectorFiles, r.VectorFiles)
	}
	for name, want := range map[string][]byte{artifact.VectorsFile: vectors, artifact.PolicyVectorsFile: policyVectors} {
		if b, err := os.ReadFile(filepath.Join(in.dir, name)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s differs from the compile's (%v)", name, err)
		}
	}

	in.dir, in.elf = t.TempDir(), filepath.Join(t.TempDir(), "missing.elf")
	got, err = budgetStage(in)
	if err == nil || got == nil || got.budget != nil || len(got.vectorFiles) != 1 {
		t.Errorf("no ELF: %v, %+v", err, got)
	}
}

// fit builds the chosen form's host drivers ahead (speculator), in that form's directory, and
// the build stage takes them instead of running the host compiler again: byte for byte what
// building the emitted sources in the compile directory gives.
func TestFitBuildsHostDriversAhead(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	wrapper := func(name, log string) string {
		path := filepath.Join(tmp, name)
		script := "#!/bin/sh\n"
		if log != "" {
			script += `echo "$PWD" >> ` + log + "\n"
		}
		if err := os.WriteFile(path, []byte(script+`exec gcc "$@"`+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	log := filepath.Join(tmp, "log")
	c := stagesTo(t, CompileOptions{Model: "../testdata/models/xgb_small.json", Handler: artifact.HandlerNone, HostCC: wrapper("cc", log)}, "fit")
	if len(c.plan.Candidates) < 2 || c.speculation == nil || c.speculation.fb != c.chosenBuild {
		t.Fatalf("%d candidates; no speculation on the chosen form", len(c.plan.Candidates))
	}
	<-c.speculation.done
	ran := func() []string {
		b, _ := os.ReadFile(log)
		return strings.Fields(string(b))
	}
	// (A speculation on a candidate that another overtook may have started in its directory.)
	inChosen := func() int {
		return len(slices.DeleteFunc(ran(), func(d string) bool { return d != c.chosenBuild.dir }))
	}
	fitRuns := ran()
	if inChosen() != 4 || slices.ContainsFunc(fitRuns, func(d string) bool { return filepath.Dir(d) != c.formsDir }) {
		t.Fatalf("fit ran the host compiler in %q; want 4 runs (2 compiles, 2 links) in %s", fitRuns, c.chosenBuild.dir)
	}
	var err error
	if c.emitted, err = emitStage(c.emitInput()); err != nil {
		t.Fatal(err)
	}
	if c.built, err = buildStage(c.buildInput()); err != nil {
		t.Fatal(err)
	}
	if got := ran(); len(got) != len(fitRuns) {
		t.Errorf("the build stage ran the host compiler again: %q", got[len(fitRuns):])
	}
	sources, err := buildcache.SourcesOnDisk(c.dir, c.expect)
	if err != nil {
		t.Fatal(err)
	}
	_, file := c.entry()
	fresh := hostBuild{ctx: t.Context(), cc: wrapper("fresh-cc", ""), dir: c.dir, tmp: t.TempDir(), source: "./" + file, opt: c.plan.Opt, sources: sources}
	for _, ubsan := range []bool{false, true} {
		bin, took := filepath.Join(fresh.tmp, "driver"), c.hostBin
		if ubsan {
			bin, took = bin+"-ubsan", c.ubsan
		}
		if _, err := fresh.build(bin, ubsan, func(string, ...string) error { return nil }); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(bin)
		got, err := os.ReadFile(took)
		if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s (%v) is not what the host compiler builds from the compile directory", took, err)
		}
	}
}
