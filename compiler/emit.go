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
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
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

// emit writes the policy C, the nicsdk sources, the RL-CC entry and the host driver into the
// compile's fresh directory, after proving that the model file's strings change nothing
// outside the comments. It records what it wrote (c.expect) for checkSources.
func (c *compilation) emit() error {
	dir := c.dir
	if err := artifact.OutDir(filepath.Join(dir, artifact.HostDir)); err != nil {
		return err
	}
	plan, err := newCodePlan(c.Model, c.chosen())
	if err != nil {
		return err
	}
	r := c.rendered()
	if r == nil {
		if r, err = render(c.Policy, plan, fileNames); err != nil {
			return err
		}
	}
	neutral, err := render(c.Policy, plan, neutralNames)
	if err != nil {
		return err
	}
	gen := r.sources()
	c.sourcesHash = hashSources(gen)
	c.expect = neutral.sources()
	for n, b := range gen {
		if err := sameCode(n, b, c.expect[n]); err != nil {
			return err
		}
	}
	// The model alone needs only the ABI header and the linker script.
	sdk := nicsdk.Sources()
	if c.Handler != artifact.HandlerRLCC {
		delete(sdk, nicsdk.RLCCHeaderName)
	}
	for n, b := range sdk {
		gen[n], c.expect[n] = b, b
	}
	c.files = nil
	for n, b := range gen {
		if err := artifact.WriteOut(filepath.Join(dir, n), b); err != nil {
			return err
		}
		c.files = append(c.files, n)
	}
	driver := []byte(driverC(len(c.Policy.InputFormats()), r.policy.HeaderName, c.Handler == artifact.HandlerRLCC, c.Policy.StateWords()))
	c.expect[filepath.Join(artifact.HostDir, "driver.c")] = driver
	if err := artifact.WriteOut(filepath.Join(dir, artifact.HostDir, "driver.c"), driver); err != nil {
		return err
	}
	slices.Sort(c.files)
	if c.opt.tamper != nil {
		return c.opt.tamper(dir)
	}
	return nil
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

// hostCC runs the host compiler under the compile's context, in a process group of its own
// with its temporary files in tmp (which the caller removes): cancelled, the group gets
// SIGTERM, and a temporary file it leaves goes with tmp.
func (c *compilation) hostCC(tmp string, args ...string) *exec.Cmd {
	return hostCommand(c.context(), c.opt.HostCC, tmp, args...)
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

// sources are the C files the firmware and the host builds compile (the driver aside): the
// RL-CC handler includes the policy's .c.
func (c *compilation) sources() []string {
	_, file := c.entry()
	return []string{filepath.Join(c.dir, file)}
}

// entry is the firmware's entry point and the C file that defines it: the RL-CC handler, or
// the policy alone.
func (c *compilation) entry() (name, file string) {
	if c.Handler == artifact.HandlerRLCC {
		return artifact.EntryHandler, artifact.HandlerFile
	}
	return artifact.EntryPolicy, artifact.EntryPolicy + ".c"
}

// build checks the sources on disk (checkSources), then compiles them into an object three
// times at once (host strict, host with UBSan, RISC-V firmware; the objects in a temporary
// directory), checks each object's symbols (checkSymbols), and links the host driver twice
// and the firmware ELF, whose symbols it checks too.
func (c *compilation) build() error {
	if err := c.checkSources(); err != nil {
		return err
	}
	dir := c.dir
	c.elf = filepath.Join(dir, artifact.FirmwareFile)
	c.hostBin = filepath.Join(dir, artifact.HostDir, "driver")
	c.ubsan = filepath.Join(dir, artifact.HostDir, "driver-ubsan")
	driver := filepath.Join(dir, artifact.HostDir, "driver.c")
	tmp, err := os.MkdirTemp("", "nicc-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	gcc := func(args ...string) error {
		if msg, err := c.hostCC(tmp, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", c.opt.HostCC, strings.Join(args, " "), err, msg)
		}
		return nil
	}
	host := func(out string, extra ...string) error {
		obj := filepath.Join(tmp, filepath.Base(out)+".o")
		flags := append(append(c.withOpt(HostFlags), extra...), "-I", dir)
		if err := gcc(append(append(slices.Clone(flags), "-c", "-o", obj), c.sources()...)...); err != nil {
			return err
		}
		if err := c.checkSymbols(obj, ""); err != nil {
			return err
		}
		return gcc(append(flags, "-o", out, driver, obj)...)
	}
	firmware := func() error {
		if fb := c.chosenBuild; fb != nil && fb.builtAs(dir, c.files) {
			// fit built these very sources with these flags: its firmware is this one.
			if err := c.checkSymbols(fb.obj, ""); err != nil {
				return err
			}
			if err := artifact.CopyFile(fb.elf, c.elf); err != nil {
				return err
			}
			c.fromFit = true
			return c.checkSymbols(c.elf, fb.obj)
		}
		obj := filepath.Join(tmp, "firmware.o")
		extra := append(c.withOpt(FirmwareWarnFlags), "-I", dir)
		if err := nicsdk.Object(obj, extra, c.sources()...); err != nil {
			return err
		}
		if err := c.checkSymbols(obj, ""); err != nil {
			return err
		}
		if err := nicsdk.Build(c.elf, filepath.Join(dir, nicsdk.LinkerScriptName), extra, obj); err != nil {
			return err
		}
		return c.checkSymbols(c.elf, obj)
	}
	var errs [3]error
	var wg sync.WaitGroup
	var mu sync.Mutex
	built := 0
	c.progress("build", 0, 3)
	for i, b := range []func() error{func() error { return host(c.hostBin) }, func() error { return host(c.ubsan, UBSanFlags...) }, firmware} {
		wg.Go(func() {
			errs[i] = b()
			mu.Lock() // progress is told of each build as it finishes, one at a time
			built++
			c.progress("build", built, 3)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, err := range errs {
		var ce *budget.CheckError
		if errors.As(err, &ce) {
			return err
		}
	}
	if err := errors.Join(errs[:]...); err != nil {
		// The generated C failing to build is nicc's fault, not the model's.
		return &budget.CheckError{Err: fmt.Errorf("building the generated C failed (an internal error; please report it): %w", err)}
	}
	return nil
}
