package fwsim_test

// Helpers shared by the qemu referee tests and the benchmark: build C and assembly into a
// firmware ELF with riscv64-unknown-elf-gcc, and run an ELF under qemu-riscv64.
//
// The tools come from Debian (gcc-riscv64-unknown-elf, qemu-user); `go tool task setup`
// installs them, and `go tool task test` runs setup first. A missing tool fails the test with
// that instruction: the referee never skips.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/nicsdk"
)

const (
	riscvCC = nicsdk.CC
	qemuRV  = "qemu-riscv64"

	// refereeDir holds the C sources, start-up assembly and linker script of the referee.
	refereeDir = "testdata/referee"
)

// qemuCPU selects the ISA qemu emulates: rv64 with Zbb explicitly on, so the referee does
// not depend on qemu's default extension set.
const qemuCPU = "rv64,zbb=true"

// requireTool fails the test when name is not on PATH, saying how to install it.
func requireTool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		tb.Fatalf("%s is not on PATH (%v): the qemu referee needs it; run `go tool task setup` "+
			"(installs the Debian packages gcc-riscv64-unknown-elf and qemu-user)", name, err)
	}
	return p
}

// build describes one firmware ELF.
type build struct {
	Out      string   // output path
	Opt      string   // "-O0", "-O2", "-Os"
	Defines  []string // "NAME=VALUE", passed as -D
	Includes []string // directories passed as -I
	Srcs     []string // .c, .S; relative paths are taken from refereeDir
}

// requireCC fails the test unless the cross compiler and its rv64imac libgcc are present.
// Call it on the test goroutine before compileELF runs on others.
func requireCC(tb testing.TB) {
	tb.Helper()
	requireTool(tb, riscvCC)
	if _, err := nicsdk.Libgcc(); err != nil {
		tb.Fatal(err)
	}
}

// compileELF builds b as firmware (nicsdk.Build) with the referee's linker script, and returns the ELF's bytes; the error shows the command and its output. Safe
// to call from several goroutines.
func compileELF(b build) ([]byte, error) {
	ld, err := filepath.Abs(filepath.Join(refereeDir, "link.ld"))
	if err != nil {
		return nil, err
	}
	extra := []string{"-Wall", "-Werror", b.Opt}
	for _, d := range b.Defines {
		extra = append(extra, "-D"+d)
	}
	for _, d := range b.Includes {
		extra = append(extra, "-I"+d)
	}
	srcs := make([]string, len(b.Srcs))
	for i, s := range b.Srcs {
		if !filepath.IsAbs(s) {
			s = filepath.Join(refereeDir, s)
		}
		srcs[i] = s
	}
	if err := nicsdk.Build(b.Out, ld, extra, srcs...); err != nil {
		return nil, fmt.Errorf("building %s: %v", filepath.Base(b.Out), err)
	}
	return os.ReadFile(b.Out)
}

// buildELF is compileELF on the test goroutine: failures are fatal.
func buildELF(tb testing.TB, b build) []byte {
	tb.Helper()
	requireCC(tb)
	data, err := compileELF(b)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// qemuRun runs elf under qemu-riscv64 with args and returns its standard output. A non-zero
// exit, a signal or a run longer than a minute is fatal and shows the standard error.
func qemuRun(tb testing.TB, elf string, args ...string) []byte {
	tb.Helper()
	requireTool(tb, qemuRV)
	out, _, err := qemuExec(time.Minute, elf, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// qemuExec runs elf under qemu-riscv64 and returns its standard output and the times from
// start to exit. Safe to call from several goroutines.
func qemuExec(timeout time.Duration, elf string, args ...string) ([]byte, runTimes, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemuRV, append([]string{"-cpu", qemuCPU, elf}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := runTimes{wall: time.Since(start)}
	if cmd.ProcessState != nil {
		took.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return nil, took, fmt.Errorf("qemu-riscv64 %s %s: %v (stderr: %q)",
			filepath.Base(elf), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), took, nil
}

// runTimes are the wall-clock and CPU (user and system) times of a run.
type runTimes struct{ wall, cpu time.Duration }

// parallel runs f(0..n-1) on up to limit goroutines and returns when all are done.
func parallel(n, limit int, f func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
