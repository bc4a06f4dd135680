package budget

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/nicsdk"
)

// The WCET test programs of fwsim, built with nicsdk's firmware flags (docs/ARCHITECTURE.md). The cross
// compiler comes from Debian (gcc-riscv64-unknown-elf); `go tool task setup` installs it. A
// missing compiler fails the test.
const wcetSrc = "../fwsim/testdata/wcet"

func buildFirmware(t *testing.T, src, opt string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c")+opt+".elf")
	if err := nicsdk.Build(out, filepath.Join(wcetSrc, "link.ld"), []string{"-Wall", "-Werror", opt}, filepath.Join(wcetSrc, src)); err != nil {
		t.Fatal(err)
	}
	return out
}

func vectors(t *testing.T, text string) []Vector {
	t.Helper()
	vs, err := ReadVectors(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// switchVectors call on_event(kind, rate, x) on every case.
func switchVectors(t *testing.T) []Vector {
	var b strings.Builder
	for k := 0; k < 12; k++ {
		fmt.Fprintf(&b, "%d 0x80000 12345\n%d 7 0xffffffff\n", k, k)
	}
	return vectors(t, b.String())
}

func TestBudgetFits(t *testing.T) {
	elf := buildFirmware(t, "switch.c", "-O2")
	r, err := Analyze(Options{ELF: elf, Entry: "on_event", Vectors: switchVectors(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fits || r.Verdict != "fits" || r.Core.Name != fwsim.DefaultProfile || r.BudgetMicros != 2 {
		t.Errorf("report %+v: want fits on dpa in 2 µs", r)
	}
	p, _ := fwsim.LookupProfile("")
	if want := float64(r.WCETCycles) / p.ClockHz * 1e6; math.Abs(r.WCETMicros-want) > 1e-12 {
		t.Errorf("WCET %d cycles = %v µs, want %v", r.WCETCycles, r.WCETMicros, want)
	}
	if math.Abs(r.HeadroomMicro-(2-r.WCETMicros)) > 1e-12 || math.Abs(r.HeadroomPct-100*(2-r.WCETMicros)/2) > 1e-9 {
		t.Errorf("headroom %v µs %v%%", r.HeadroomMicro, r.HeadroomPct)
	}
	m := r.Measured
	if m == nil || m.Vectors != 24 || m.MinCycles > m.MedianCycles || m.MedianCycles > m.MaxCycles || m.MaxCycles > r.WCETCycles {
		t.Fatalf("measured %+v, WCET %d", m, r.WCETCycles)
	}
	// Every case runs, so the slowest vector is the worst case.
	if m.Tightness != 1 {
		t.Errorf("tightness %v, want 1 (WCET %d, max %d)", m.Tightness, r.WCETCycles, m.MaxCycles)
	}
	if !strings.Contains(r.Core.ClockSource, "assumption") || len(r.Core.Assumed) == 0 || r.Core.Assumed[0] != "clock_hz" {
		t.Errorf("dpa's clock must be labelled an assumption: %+v", r.Core)
	}
	if len(r.Functions) != 1 || r.Functions[0].Name != "on_event" || r.Functions[0].Cycles != r.WCETCycles {
		t.Errorf("functions %+v", r.Functions)
	}
}

func TestBudgetOverAndThreads(t *testing.T) {
	elf := buildFirmware(t, "calls.c", "-O2")
	one, err := Analyze(Options{ELF: elf, Entry: "update", Core: "ibex"})
	if err != nil {
		t.Fatal(err)
	}
	if one.Measured != nil || one.Core.Name != "ibex" || len(one.Functions) < 4 {
		t.Errorf("report %+v", one)
	}
	r, err := Analyze(Options{ELF: elf, Entry: "update", Core: "ibex", Budget: 10 * time.Nanosecond, ThreadsSharing: 16})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fits || r.Verdict != "over budget" || r.HeadroomMicro >= 0 || r.HeadroomPct >= 0 {
		t.Errorf("report %+v: want over budget", r)
	}
	if r.WCETCycles != one.WCETCycles || math.Abs(r.WCETMicros-16*one.WCETMicros) > 1e-9 || r.Core.ThreadsSharing != 16 {
		t.Errorf("16 threads: %v µs, one thread %v µs", r.WCETMicros, one.WCETMicros)
	}
}

func TestBudgetLoops(t *testing.T) {
	elf := buildFirmware(t, "loop.c", "-O2")
	head := loopHead(t, elf, "sum_window")
	var ce *CheckError
	vs := vectors(t, "hex:01000000020000000300000004000000050000000600000007000000ffffffff 8\nhex:00 0\n")
	r, err := Analyze(Options{ELF: elf, Entry: "sum_window", LoopBounds: []string{head + "=8"}, Vectors: vs})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Loops) != 1 || r.Loops[0].Bound != 8 || r.Loops[0].Counted || r.Measured.MaxCycles > r.WCETCycles {
		t.Errorf("report %+v loops %+v", r, r.Loops)
	}
	// -O2's rotated loop runs its head n times: n = 8 is the worst case, exactly.
	if r.Measured.Tightness != 1 {
		t.Errorf("tightness %v, want 1", r.Measured.Tightness)
	}
	// A bound at an address that is not a loop head is bad input, not a check failure.
	_, err = Analyze(Options{ELF: elf, Entry: "sum_window", LoopBounds: []string{head + "=8", "sum_window+0x0=3"}})
	if err == nil || errors.As(err, &ce) || !errors.Is(err, wcet.ErrNoSuchLoop) {
		t.Errorf("bound on a non-head: %v", err)
	}
	// Counted loops need nothing.
	r, err = Analyze(Options{ELF: elf, Entry: "mix12"})
	if err != nil || len(r.Loops) != 1 || !r.Loops[0].Counted || r.Loops[0].Bound != 12 {
		t.Errorf("mix12: %+v, %v", r, err)
	}
}

// loopHead is the head of entry's unbounded loop, as func+offset, from Budget's error.
func loopHead(t *testing.T, elf, entry string) string {
	t.Helper()
	_, err := Analyze(Options{ELF: elf, Entry: entry})
	var ce *CheckError
	var we *wcet.Error
	if !errors.As(err, &ce) || !errors.Is(err, wcet.ErrUnboundedLoop) || !errors.As(err, &we) {
		t.Fatalf("%s without a bound: %v, want a CheckError for an unbounded loop", entry, err)
	}
	return fmt.Sprintf("%s+0x%x", entry, we.PC-we.FuncAddr)
}

func TestBudgetFaults(t *testing.T) {
	elf := buildFirmware(t, "loop.c", "-O2")
	// A null pointer: the firmware faults, a failed check.
	_, err := Analyze(Options{ELF: elf, Entry: "sum_window", LoopBounds: []string{loopHead(t, elf, "sum_window") + "=8"},
		Vectors: vectors(t, "0 3\n"), VectorsFile: "v.txt"})
	var ce *CheckError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "v.txt line 1: sum_window faulted") {
		t.Errorf("null pointer: %v", err)
	}
	// A run above the WCET is reported as the analysis' internal error.
	im, err := fwsim.LoadELF(mustRead(t, elf))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := fwsim.LookupProfile("")
	_, err = measure(im, p, "mix12", "v.txt", vectors(t, "5\n"), &wcet.Report{Cycles: 3})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "INTERNAL ERROR, the WCET analysis is unsound: v.txt line 1") {
		t.Errorf("unsound: %v", err)
	}
	// A loop bound one too low: the run above the WCET names the loop head and how often it
	// ran. The vectors before it are replayed first (memory carries over).
	head := loopHead(t, elf, "sum_window")
	window := "hex:0100000002000000030000000400000005000000060000000700000008000000"
	_, err = Analyze(Options{ELF: elf, Entry: "sum_window", LoopBounds: []string{head + "=7"},
		Vectors: vectors(t, window+" 3\n"+window+" 8\n"), VectorsFile: "v.txt"})
	want := "v.txt line 2: loop head " + head + " ran 8 times in one entry into the loop, more than its --loop-bound of 7: the bound is too low, so the WCET of "
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("bound too low: %v\nwant %q", err, want)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBudgetBadInput(t *testing.T) {
	elf := buildFirmware(t, "switch.c", "-O2")
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.elf")
	if err := os.WriteFile(trunc, mustRead(t, elf)[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		opt  Options
		want string
	}{
		{Options{ELF: elf, Entry: "nosuch"}, `entry "nosuch": no such symbol (functions: on_event)`},
		{Options{ELF: trunc, Entry: "on_event"}, trunc + ": fwsim: elf: truncated"},
		{Options{ELF: filepath.Join(dir, "none.elf"), Entry: "on_event"}, "none.elf: no such file"},
		{Options{ELF: elf, Entry: "on_event", Core: "z80"}, `no core profile "z80"`},
		{Options{ELF: elf, Entry: "on_event", ThreadsSharing: -1}, "threads sharing -1"},
		{Options{ELF: elf, Entry: "on_event", LoopBounds: []string{"on_event+4"}}, "want HEAD=N"},
		{Options{ELF: elf, Entry: "on_event", LoopBounds: []string{"nosuch+4=2"}}, "no such symbol"},
	}
	for _, c := range cases {
		_, err := Analyze(c.opt)
		var ce *CheckError
		if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line of bad input with %q", c.opt, err, c.want)
		}
	}
}

func TestParseBudget(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"2us": 2 * time.Microsecond, "1.5µs": 1500 * time.Nanosecond, "1.5μs": 1500 * time.Nanosecond,
		"900ns": 900 * time.Nanosecond, " 2 us ": 2 * time.Microsecond, "1ms": time.Millisecond,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "2", "fast", "-1us", "0ns"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestParseLoopBound(t *testing.T) {
	h, n, err := ParseLoopBound(" f+0x1c = 8 ")
	if err != nil || h != "f+0x1c" || n != 8 {
		t.Errorf("got %q %d %v", h, n, err)
	}
	for _, bad := range []string{"f+4", "=3", "f+4=0", "f+4=x", "f+4=-2"} {
		if _, _, err := ParseLoopBound(bad); err == nil {
			t.Errorf("ParseLoopBound(%q): no error", bad)
		}
	}
}

// The load an entry sustains: the most threads sharing the pipeline whose decisions each
// still fit the budget (at 1.8 GHz, 2 µs is 3,600 cycles).
func TestFitsThreads(t *testing.T) {
	for _, c := range []struct {
		cycles uint64
		want   int
	}{{269, 13}, {225, 16}, {226, 15}, {3600, 1}, {3601, 0}, {0, MaxThreads}, {1, MaxThreads}} {
		if got := fitsThreads(c.cycles, 2*time.Microsecond, 1.8e9); got != c.want {
			t.Errorf("%d cycles: %d threads, want %d", c.cycles, got, c.want)
		}
	}
}
