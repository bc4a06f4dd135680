package compiler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/buildcache"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/target/abi"
)

// rendered is the C a compile writes for its IR: codegen's policy files and, under the RL-CC
// handler, the engine entry.
type rendered struct {
	policy  *codegen.Files
	handler []byte // nil without the RL-CC handler
}

// sources are the rendered files by name.
func (r *rendered) sources() map[string][]byte {
	m := map[string][]byte{r.policy.HeaderName: r.policy.Header, r.policy.SourceName: r.policy.Source}
	if r.handler != nil {
		m[artifact.HandlerFile] = r.handler
	}
	return m
}

// codePlan is how an integer policy is printed: its code form (with a tree ensemble's rank
// layout or an LSTM's plan of product tables) and the handler around it, with the handler's
// parameters and input layout.
type codePlan struct {
	form     codegen.Form
	rank     *quantize.RankLayout
	products codegen.Products
	handler  artifact.Handler
	params   nicsdk.Params
	layout   nicsdk.Layout
}

// sourceNames says which names render prints: the model file's own, or neutral ones.
type sourceNames bool

const (
	fileNames    sourceNames = false
	neutralNames sourceNames = true
)

// render prints the integer policy pol as C under plan. neutralNames replaces every string read
// from the model file (its name and its input names) with a fixed one: emit compares the two
// renders to prove that nothing from the file reaches the C outside its comments. plan's
// layout must pass CheckLayout.
func render(pol quantize.Policy, plan codePlan, names sourceNames) (*rendered, error) {
	rename := func(name string, ins []quantize.Input) (string, []quantize.Input) {
		if names == fileNames {
			return name, ins
		}
		ins = slices.Clone(ins)
		for i := range ins {
			ins[i].Name = fmt.Sprintf("x%d", i)
		}
		return "model", ins
	}
	// The RL-CC handler includes the policy's .c and calls its always-inlined form.
	gopt := codegen.Options{Inline: plan.handler == artifact.HandlerRLCC, Form: plan.form, Rank: plan.rank, Products: plan.products}
	var files *codegen.Files
	var err error
	name, hash, kind := "", "", "tree"
	switch p := pol.(type) {
	case *quantize.LSTMIR:
		ir := *p
		ir.Name, ir.Inputs = rename(ir.Name, ir.Inputs)
		files, err = codegen.LSTM(&ir, gopt)
		name, hash, kind = ir.Name, ir.ModelHash, "int8 LSTM"
	case *quantize.MLPIR:
		ir := *p
		ir.Name, ir.Inputs = rename(ir.Name, ir.Inputs)
		files, err = codegen.MLP(&ir, gopt)
		name, hash, kind = ir.Name, ir.ModelHash, "int8 MLP"
	case *quantize.TreeIR:
		ir := *p
		ir.Name, ir.Inputs = rename(ir.Name, ir.Inputs)
		files, err = codegen.Trees(&ir, gopt)
		name, hash = ir.Name, ir.ModelHash
	default:
		return nil, fmt.Errorf("internal error: no C for a %T policy", pol)
	}
	if err != nil {
		return nil, err
	}
	r := &rendered{policy: files}
	if plan.handler == artifact.HandlerRLCC {
		r.handler = []byte(handlerC(name, hash, kind, files.SourceName, plan.params, plan.layout, pol.StateWords(), quantize.Out(pol)))
	}
	return r, nil
}

// newCodePlan is the plan for printing c's policy in the form cand, once its layout passes
// CheckLayout.
func newCodePlan(c *golden.Model, cand candidate) (codePlan, error) {
	if c.Handler == artifact.HandlerRLCC {
		if err := c.CheckLayout(); err != nil {
			return codePlan{}, err
		}
	}
	return codePlan{form: cand.form, rank: cand.rank, products: cand.products, handler: c.Handler, params: c.Params, layout: c.Layout()}, nil
}

// rendered is the chosen form's C as fit rendered it, nil when fit rendered none.
func (c *compilation) rendered() *rendered {
	if c.chosenBuild == nil {
		return nil
	}
	return c.chosenBuild.rendered
}

// chosen is the form fit chose, as a candidate.
func (c *compilation) chosen() candidate {
	return candidate{form: c.form, rank: c.rank, products: c.products}
}

// emitInput is what the emit stage reads: the compile's directory, the golden model (its
// policy, handler, parameters and layout), the form fit chose and, when fit rendered it, its C.
type emitInput struct {
	dir      string
	model    *golden.Model
	chosen   candidate
	rendered *rendered // fit's render of the chosen form; nil: emit renders it
	tamper   func(dir string) error
}

// emitInput is the emit stage's input from the stages before it.
func (c *compilation) emitInput() emitInput {
	return emitInput{dir: c.dir, model: c.Model, chosen: c.chosen(), rendered: c.rendered(), tamper: c.opt.tamper}
}

// emitStage writes the policy C, the nicsdk sources, the RL-CC entry and the host driver into
// the compile's fresh directory, after proving that the model file's strings change nothing
// outside the comments. It records what it wrote (expect) for the build's checks. Its output
// is never nil: on a failure, it holds what emit had made.
func emitStage(in emitInput) (*emitted, error) {
	out := &emitted{}
	dir := in.dir
	if err := artifact.OutDir(filepath.Join(dir, artifact.HostDir)); err != nil {
		return out, err
	}
	m := in.model
	plan, err := newCodePlan(m, in.chosen)
	if err != nil {
		return out, err
	}
	r := in.rendered
	if r == nil {
		if r, err = render(m.Policy, plan, fileNames); err != nil {
			return out, err
		}
	}
	neutral, err := render(m.Policy, plan, neutralNames)
	if err != nil {
		return out, err
	}
	gen := r.sources()
	out.sourcesHash = hashSources(gen)
	out.expect = neutral.sources()
	for n, b := range gen {
		if err := sameCode(n, b, out.expect[n]); err != nil {
			return out, err
		}
	}
	for n, b := range emitSources(m, r) {
		if _, ok := out.expect[n]; !ok {
			out.expect[n] = b
		}
		if err := artifact.WriteOut(filepath.Join(dir, n), b); err != nil {
			return out, err
		}
		if n != hostDriverFile {
			out.files = append(out.files, n)
		}
	}
	slices.Sort(out.files)
	if in.tamper != nil {
		return out, in.tamper(dir)
	}
	return out, nil
}

// hostDriverFile is the host driver's source, by its path in the compile directory.
var hostDriverFile = filepath.Join(artifact.HostDir, "driver.c")

// emitSources are the files emit writes for the render r of m's policy, by their paths in the
// compile directory: r's sources, nicsdk's (the model alone needs only the ABI header and the
// linker script) and the host driver (hostDriverFile).
func emitSources(m *golden.Model, r *rendered) map[string][]byte {
	files := r.sources()
	for n, b := range nicsdk.Sources() {
		if n != nicsdk.RLCCHeaderName || m.Handler == artifact.HandlerRLCC {
			files[n] = b
		}
	}
	files[hostDriverFile] = []byte(abi.DriverC(len(m.Policy.InputFormats()), r.policy.HeaderName, m.Handler == artifact.HandlerRLCC, m.Policy.StateWords()))
	return files
}

// handlerC is the RL-CC engine entry: the parameters and rlcc.h's handler around the policy,
// whose source it includes so the model is inlined into the handler. A policy that keeps
// words of state (an LSTM) gets them after the handler's; folded, it returns the multiplier.
func handlerC(name, hash, kind, policySource string, p nicsdk.Params, l nicsdk.Layout, words int, out nicsdk.PolicyOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, `/* %s: generated by nicc compile; do not edit.
 * The RL-CC event handler (nicsdk rlcc.h) around the %s policy %s.
 * Model: %s, SHA-256 %s.
 *
 *     uint32_t %s(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);
 *
 * returns the flow's new rate in fxp20 and keeps its state in ctx->data[0..%d]%s. */
#include <stdint.h>
#include "%s"
#include "%s"

`, artifact.HandlerFile, kind, artifact.EntryPolicy, codegen.CommentName(name), hash, artifact.EntryHandler, nicsdk.RLCCWords+words-1, layoutWords(l), nicsdk.RLCCHeaderName, policySource)
	b.WriteString(handlerGlue(p, l, artifact.EntryPolicy+"_inline", words, out))
	return b.String()
}

// hostCommand is the host compiler cc run on args, its temporary files in tmp, stopped with
// its children when ctx is done.
func hostCommand(ctx context.Context, cc, tmp string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cc, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// entry is the firmware's entry point and the C file that defines it: the RL-CC handler, or
// the policy alone.
func (c *compilation) entry() (name, file string) { return entryOf(c.Handler) }

// entryOf is the firmware's entry point under handler h and the C file that defines it.
func entryOf(h artifact.Handler) (name, file string) {
	if h == artifact.HandlerRLCC {
		return artifact.EntryHandler, artifact.HandlerFile
	}
	return artifact.EntryPolicy, artifact.EntryPolicy + ".c"
}

// buildInput is what the build stage reads: the compile's directory and what emit wrote into
// it, the handler, the host compiler and fit's optimisation flags, and fit's build of the
// chosen form when it made one.
type buildInput struct {
	ctx      context.Context
	dir      string
	emitted  *emitted
	handler  artifact.Handler
	hostCC   string
	opt      []string   // gcc's optimisation flags in place of -O2 (BuildInfo.Opt)
	fit      *formBuild // fit's build of the chosen form; nil: none
	progress func(done, total int)
}

// buildInput is the build stage's input from the stages before it.
func (c *compilation) buildInput() buildInput {
	return buildInput{ctx: c.context(), dir: c.dir, emitted: c.emitted, handler: c.Handler, hostCC: c.opt.HostCC, opt: c.plan.Opt,
		fit: c.chosenBuild, progress: func(done, total int) { c.progress("build", done, total) }}
}

// hostBuild is a host build of the driver over the sources in dir: the host compiler cc run in
// dir on paths relative to it (so the UBSan build's diagnostics name them so too, rlcc.h:707:44,
// not an absolute path, and the same sources in another directory build to the same bytes,
// buildcache.Process), its objects and temporary files in tmp.
type hostBuild struct {
	ctx      context.Context
	cc       string
	dir, tmp string
	source   string   // the C that defines the entry, relative to dir ("./handler.c")
	opt      []string // gcc's optimisation flags in place of HostFlags' -O2 (BuildInfo.Opt)
	sources  map[string][]byte
}

// obj is the object the build of bin compiles.
func (hb hostBuild) obj(bin string) string { return filepath.Join(hb.tmp, filepath.Base(bin)+".o") }

// build compiles the entry's C into an object (hb.obj), strict or with UBSan, runs checkObj on
// it, and links the driver bin, or writes what the same build wrote before (buildcache.Process, where
// checkObj did not run). It reports whether the outputs came from the cache.
func (hb hostBuild) build(bin string, ubsan bool, checkObj func(path string, objs ...string) error) (cached bool, err error) {
	gcc := func(args ...string) error {
		cmd := hostCommand(hb.ctx, hb.cc, hb.tmp, args...)
		cmd.Dir = hb.dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s (in %s): %v\n%s", hb.cc, strings.Join(args, " "), hb.dir, err, msg)
		}
		return nil
	}
	obj := hb.obj(bin)
	flags := withOpt(HostFlags, hb.opt)
	if ubsan {
		flags = append(flags, UBSanFlags...)
	}
	flags = append(flags, "-I", ".")
	return buildcache.Process.Do(buildcache.KeyOf(hb.cc+" host", hb.dir, slices.Concat(flags, []string{hb.source}), hb.sources), []string{obj, bin}, func() error {
		if err := gcc(slices.Concat(flags, []string{"-c", "-o", obj, hb.source})...); err != nil {
			return err
		}
		if err := checkObj(obj); err != nil {
			return err
		}
		return gcc(slices.Concat(flags, []string{"-o", bin, "./" + hostDriverFile, obj})...)
	})
}

// buildStage checks the sources on disk (checkDirectives), then compiles them into an object
// three times at once (host strict, host with UBSan, RISC-V firmware; the objects in a
// temporary directory), checks each object's symbols (symbolCheck), and links the host driver
// twice and the firmware ELF, whose symbols it checks too. Its output is never nil: the
// paths are set before anything is built.
func buildStage(in buildInput) (*built, error) {
	dir := in.dir
	out := &built{elf: filepath.Join(dir, artifact.FirmwareFile), hostBin: filepath.Join(dir, artifact.HostDir, "driver"),
		ubsan: filepath.Join(dir, artifact.HostDir, "driver-ubsan")}
	idents, err := identifiers(in.emitted.expect)
	if err != nil {
		return out, err
	}
	if err := checkDirectives(dir, in.emitted.expect); err != nil {
		return out, err
	}
	check := niccSymbols(in.handler, idents)
	_, file := entryOf(in.handler)
	sources := []string{filepath.Join(dir, file)} // the RL-CC handler includes the policy's .c
	tmp, err := os.MkdirTemp("", "nicc-build-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(tmp)
	onDisk, err := buildcache.SourcesOnDisk(dir, in.emitted.expect)
	if err != nil {
		return out, err
	}
	hb := hostBuild{ctx: in.ctx, cc: in.hostCC, dir: dir, tmp: tmp, source: "./" + file, opt: in.opt, sources: onDisk}
	host := func(bin string, ubsan bool) error {
		hit, err := hb.build(bin, ubsan, check.symbols)
		if err == nil && hit {
			err = check.symbols(hb.obj(bin))
		}
		return err
	}
	firmware := func() error {
		if fb := in.fit; fb != nil && fb.builtAs(dir, in.emitted.files) {
			// fit built these very sources with these flags: its firmware is this one.
			if err := check.symbols(fb.obj); err != nil {
				return err
			}
			if err := artifact.CopyFile(fb.elf, out.elf); err != nil {
				return err
			}
			out.fromFit = true
			return check.symbols(out.elf, fb.obj)
		}
		obj := filepath.Join(tmp, "firmware.o")
		extra := append(withOpt(FirmwareWarnFlags, in.opt), "-I", dir)
		hit, err := buildFirmware(obj, out.elf, extra, dir, sources, onDisk, func() error { return check.symbols(obj) })
		if err == nil && hit {
			err = check.symbols(obj)
		}
		if err != nil {
			return err
		}
		return check.symbols(out.elf, obj)
	}
	var errs [3]error
	var wg sync.WaitGroup
	var mu sync.Mutex
	built := 0
	in.progress(0, 3)
	for i, b := range []func() error{func() error { return host(out.hostBin, false) }, func() error { return host(out.ubsan, true) }, firmware} {
		wg.Go(func() {
			errs[i] = b()
			mu.Lock() // progress is told of each build as it finishes, one at a time
			built++
			in.progress(built, 3)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, err := range errs {
		var ce *budget.CheckError
		if errors.As(err, &ce) {
			return out, err
		}
	}
	if err := errors.Join(errs[:]...); err != nil {
		// The generated C failing to build is nicc's fault, not the model's.
		return out, &budget.CheckError{Err: fmt.Errorf("building the generated C failed (an internal error; please report it): %w", err)}
	}
	return out, nil
}

// buildFirmware compiles srcs (in dir, which holds sources: what the build can read, by
// name) into the object obj with extra after nicsdk.FirmwareFlags, runs checkObj on it, and
// links the ELF elf with dir's linker script: nicsdk.Object, then nicsdk.Build, or what the
// same build wrote before. It reports whether the outputs came from the cache, where checkObj
// did not run.
func buildFirmware(obj, elf string, extra []string, dir string, srcs []string, sources map[string][]byte, checkObj func() error) (cached bool, err error) {
	key := buildcache.KeyOf(nicsdk.CC+" firmware", dir, append(slices.Concat(nicsdk.FirmwareFlags, extra), srcs...), sources)
	return buildcache.Process.Do(key, []string{obj, elf}, func() error {
		if err := nicsdk.Object(obj, extra, srcs...); err != nil {
			return err
		}
		if err := checkObj(); err != nil {
			return err
		}
		return nicsdk.Build(elf, filepath.Join(dir, nicsdk.LinkerScriptName), extra, obj)
	})
}
