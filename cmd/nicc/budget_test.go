package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// Firmware for the budget tests: fwsim's WCET test programs built with
// riscv64-unknown-elf-gcc (Debian gcc-riscv64-unknown-elf; `go tool task setup` installs it).
// A missing compiler fails the test.
const wcetSrc = "../../fwsim/testdata/wcet"

func firmware(t *testing.T, src, opt string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c")+opt+".elf")
	if err := nicsdk.Build(out, filepath.Join(wcetSrc, "link.ld"), []string{"-Wall", "-Werror", opt}, filepath.Join(wcetSrc, src)); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// line returns the output line that starts with label, spaces collapsed.
func line(out, label string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, label+" ") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

func TestBudgetFits(t *testing.T) {
	elf := firmware(t, "calls.c", "-O2")
	vecs := writeFile(t, "v.txt", "# update(rate, y, prev)\n100000 -30000 5000\n1048576 65536 0\n1 -65536 1048576\n")
	code, out, errOut := nicc(t, "budget", elf, "--entry", "update", "--vectors", vecs)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for label, want := range map[string]string{
		"core":      "core dpa at 1.8 GHz (assumption: third-party figure",
		"assumed":   "assumed every number of profile dpa is an assumption",
		"WCET":      "µs (",
		"measured":  "measured 3 vectors: min ",
		"tightness": "(WCET ÷ max measured)",
		"budget":    "budget 2 µs",
		"headroom":  "headroom ",
		"verdict":   "verdict fits",
	} {
		if l := line(out, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q; output:\n%s", label, l, want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^WCET +\d+ cycles = 0\.\d{3} µs \(\d+ instructions on the worst path\)$`).MatchString(out) {
		t.Errorf("WCET line: %q", line(out, "WCET"))
	}
	for _, f := range []string{"update", "multiplier", "fxp_mul", "clamp_rate", "smooth"} {
		if !strings.Contains(out, "\n  "+f+" ") {
			t.Errorf("functions lack %s:\n%s", f, out)
		}
	}
}

func TestBudgetOverBudgetExits1(t *testing.T) {
	elf := firmware(t, "loop.c", "-O0")
	head := loopHeadArg(t, elf, "popcount16")
	code, out, errOut := nicc(t, "budget", elf, "--entry", "popcount16", "--loop-bound", head+"=17", "--budget", "100ns")
	if code != exitCheck {
		t.Fatalf("exit %d, want %d: %s", code, exitCheck, errOut)
	}
	if line(out, "verdict") != "verdict over budget" || !strings.Contains(line(out, "headroom"), "-") {
		t.Errorf("report not printed before failing:\n%s", out)
	}
	if !strings.Contains(out, "\nloops\n  "+head) || !strings.Contains(out, "head runs <= 17 (given)") {
		t.Errorf("loops section:\n%s", out)
	}
	// 100ns is the budget as written, 0.1 µs (it printed 0.100, and 0.09999999999999999 in fit's refusal).
	if line(out, "budget") != "budget 0.1 µs" || !strings.HasSuffix(errOut, " µs > 0.1 µs\n") {
		t.Errorf("budget line %q, stderr %q: want the budget as 0.1 µs", line(out, "budget"), errOut)
	}
	if !strings.Contains(errOut, "popcount16 is over budget: WCET ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q", errOut)
	}
	// --json still gates.
	code, out, _ = nicc(t, "budget", elf, "--entry", "popcount16", "--loop-bound", head+"=17", "--budget", "100ns", "--json")
	var r struct {
		Fits    bool   `json:"fits"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitCheck || r.Fits || r.Verdict != "over budget" {
		t.Errorf("--json over budget: exit %d, %+v, %v", code, r, err)
	}
}

// loopHeadArg runs budget without a bound and returns the head its error names.
func loopHeadArg(t *testing.T, elf, entry string) string {
	t.Helper()
	code, _, errOut := nicc(t, "budget", elf, "--entry", entry)
	m := regexp.MustCompile(`\(pass --loop-bound (` + entry + `\+0x[0-9a-f]+)=N\)`).FindStringSubmatch(errOut)
	if code != exitCheck || m == nil || !strings.Contains(errOut, "loop without a bound") {
		t.Fatalf("%s without a bound: exit %d, %q: want exit 1 naming the head", entry, code, errOut)
	}
	return m[1]
}

func TestBudgetLoopBound(t *testing.T) {
	elf := firmware(t, "loop.c", "-O2")
	head := loopHeadArg(t, elf, "sum_window")
	vecs := writeFile(t, "v.txt", "hex:0100000002000000030000000400000005000000060000000700000008000000 8\n")
	code, out, errOut := nicc(t, "budget", elf, "--entry", "sum_window", "--loop-bound", head+"=8", "--vectors", vecs)
	if code != exitOK || line(out, "tightness") != "tightness 1.000 (WCET ÷ max measured)" {
		t.Errorf("exit %d %s\n%s", code, errOut, out)
	}
	code, _, errOut = nicc(t, "budget", elf, "--entry", "sum_window", "--loop-bound", head+"=8", "--loop-bound", "sum_window=2")
	if code != exitBadInput || !strings.Contains(errOut, "no loop head") {
		t.Errorf("bound on a non-head: exit %d %q", code, errOut)
	}
}

func TestBudgetJSON(t *testing.T) {
	elf := firmware(t, "switch.c", "-O2")
	var vecs strings.Builder
	for k := 0; k < 12; k++ {
		fmt.Fprintf(&vecs, "%d 0x80000 777\n", k)
	}
	code, out, errOut := nicc(t, "budget", elf, "--entry", "on_event", "--core", "sifive-e31", "--threads-sharing", "4",
		"--vectors", writeFile(t, "v.txt", vecs.String()), "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Entry string `json:"entry"`
		Core  struct {
			Name           string  `json:"name"`
			ClockHz        float64 `json:"clock_hz"`
			ThreadsSharing int     `json:"threads_sharing"`
		} `json:"core"`
		WCETCycles uint64  `json:"wcet_cycles"`
		WCETMicros float64 `json:"wcet_us"`
		Measured   struct {
			Vectors   int     `json:"vectors"`
			MaxCycles uint64  `json:"max_cycles"`
			Tightness float64 `json:"tightness"`
		} `json:"measured"`
		BudgetMicros float64 `json:"budget_us"`
		Fits         bool    `json:"fits"`
		Functions    []struct {
			Name string `json:"name"`
		} `json:"functions"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if r.Entry != "on_event" || r.Core.Name != "sifive-e31" || r.Core.ThreadsSharing != 4 || !r.Fits || r.BudgetMicros != 2 ||
		r.Measured.Vectors != 12 || r.Measured.MaxCycles > r.WCETCycles || r.Measured.Tightness < 1 || len(r.Functions) != 1 {
		t.Errorf("%+v", r)
	}
	if want := float64(r.WCETCycles) * 4 / r.Core.ClockHz * 1e6; r.WCETMicros != want {
		t.Errorf("wcet_us %v, want %v", r.WCETMicros, want)
	}
}

func TestBudgetBadInput(t *testing.T) {
	elf := firmware(t, "switch.c", "-O2")
	data, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.elf")
	if err := os.WriteFile(trunc, data[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	x86 := filepath.Join(dir, "x86.elf")
	if msg, err := exec.Command("gcc", "-nostdlib", "-static", "-Wl,-e,f", "-o", x86, "-x", "c",
		writeFile(t, "f.c", "int f(void) { return 1; }\n")).CombinedOutput(); err != nil {
		t.Fatalf("host gcc: %v\n%s", err, msg)
	}
	// Sparse files of 3 GB: all zeros, and with the ELF header in front. Both are refused
	// before anything past the header is read.
	sparse := func(name string, head []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, head, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 3<<30); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zeros, huge := sparse("zeros.elf", nil), sparse("huge.elf", data[:64])
	fifo := filepath.Join(dir, "fifo.elf") // opening it would block: refused before
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"/dev/zero", "--entry", "x"}, "/dev/zero: fwsim: elf: not a regular file (a character device)"},
		{[]string{fifo, "--entry", "x"}, fifo + ": fwsim: elf: not a regular file (a named pipe)"},
		{[]string{dir, "--entry", "x"}, dir + " is a directory without report.json and firmware.elf: budget takes an ELF file or a nicc compile output directory"},
		{[]string{zeros, "--entry", "x"}, zeros + ": fwsim: elf: not an ELF file: bad magic (00 00 00 00) at offset 0x0"},
		{[]string{huge, "--entry", "x"}, huge + ": fwsim: elf: file of 3221225472 bytes is larger than fwsim's 64 MiB memory (MaxFile)"},
		{[]string{elf, "--entry", "nosuch"}, elf + `: entry "nosuch": no such symbol (functions: on_event)`},
		{[]string{trunc, "--entry", "on_event"}, trunc + ": fwsim: elf: truncated file"},
		{[]string{x86, "--entry", "f"}, x86 + ": fwsim: elf: machine EM_X86_64, want EM_RISCV"},
		{[]string{filepath.Join(dir, "none.elf"), "--entry", "f"}, "none.elf: no such file"},
		{[]string{elf}, "budget needs --entry NAME"},
		{[]string{"--entry", "on_event"}, "budget takes one ELF file or compile directory, got 0"},
		{[]string{elf, "--entry", "on_event", "--budget", "2"}, `budget "2": want a time such as 2us`},
		{[]string{elf, "--entry", "on_event", "--core", "z80"}, `no core profile "z80"`},
		{[]string{elf, "--entry", "on_event", "--threads", "0"}, "--threads 0: want at least 1"},
		{[]string{elf, "--entry", "on_event", "--threads-sharing", "0"}, "--threads 0: want at least 1"}, // the old spelling
		{[]string{elf, "--entry", "on_event", "--loop-bound", "x"}, `loop bound "x": want HEAD=N`},
		{[]string{elf, "--entry", "on_event", "--vectors", writeFile(t, "bad.txt", "1 hex:0g\n")}, "bad.txt: line 1: argument 2"},
	}
	for _, c := range cases {
		code, out, errOut := nicc(t, append([]string{"budget"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", c.args, code, errOut, out, c.want)
		}
	}
}

func TestBudgetRefusesUnboundable(t *testing.T) {
	elf := firmware(t, "refuse.c", "-O2")
	for entry, want := range map[string]string{
		"indirect": "indirect jump or call the analysis cannot resolve",
		"depth":    "recursion: call chain depth -> depth",
	} {
		code, _, errOut := nicc(t, "budget", elf, "--entry", entry)
		if code != exitCheck || !strings.Contains(errOut, "cannot bound "+entry) || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d %q, want exit 1 with %q", entry, code, errOut, want)
		}
	}
}

func TestBudgetListCores(t *testing.T) {
	code, out, errOut := nicc(t, "budget", "--list-cores")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"dpa (default)  1.8 GHz", "ibex ", "cv32e40p ", "sifive-e31 ", "branch_taken", "zbb_rotate"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list-cores lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  clock_hz +1\.8 GHz +assumption: third-party figure`).MatchString(out) {
		t.Errorf("dpa's clock is not labelled an assumption:\n%s", out)
	}
	for _, re := range []string{`(?m)^  memory_bytes +1\.5 MiB +assumption: `, `(?m)^  memory_bytes +1 MiB +Ibex repository`, `(?m)^  memory_bytes +32 KiB +assumption: `,
		// The memory budget a code form is chosen within, as --json gives it (it printed 0).
		`(?m)^  text_bytes +64 KiB +assumption: `, `(?m)^  rodata_bytes +256 KiB +assumption: `} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("--list-cores lacks %s:\n%s", re, out)
		}
	}
	code, out, _ = nicc(t, "budget", "--list-cores", "--json")
	var ps []struct {
		Name        string            `json:"name"`
		ClockHz     float64           `json:"clock_hz"`
		MemoryBytes uint64            `json:"memory_bytes"`
		Costs       map[string]uint64 `json:"costs"`
		Sources     map[string]string `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil || code != exitOK {
		t.Fatalf("--json: exit %d %v", code, err)
	}
	if len(ps) < 3 || ps[0].Name != "dpa" || ps[0].Costs["div"] == 0 || !strings.HasPrefix(ps[0].Sources["clock_hz"], "assumption") ||
		ps[0].MemoryBytes != 1536<<10 || !strings.HasPrefix(ps[0].Sources["memory_bytes"], "assumption") {
		t.Errorf("--list-cores --json: %+v", ps)
	}
}

// TestBudgetReturnAddress: `la ra, square; ret` jumps to square, which then returns to
// square for ever: refused (exit 1), naming the ret and the instruction that set ra. ra
// saved and restored around calls is accepted.
func TestBudgetReturnAddress(t *testing.T) {
	elf := firmware(t, "shapes.S", "-O2")
	code, out, errOut := nicc(t, "budget", elf, "--entry", "ret_elsewhere")
	want := regexp.MustCompile(`^nicc: .*shapes\.S-O2\.elf: cannot bound ret_elsewhere: fwsim: wcet: ret_elsewhere: 0x[0-9a-f]+ \(ret_elsewhere\+0x8\): ` +
		`return address not preserved: a tail call to square \(c:jalr zero, 0\(ra\)\), but ra may not hold the address ret_elsewhere was called with here: ` +
		`ret_elsewhere\+0x4 \(addi ra, ra, -\d+\) overwrote it\n$`)
	if code != exitCheck || out != "" || !want.MatchString(errOut) {
		t.Errorf("ret_elsewhere: exit %d, stdout %q, stderr %q; want exit 1 and %s", code, out, errOut, want)
	}
	code, _, errOut = nicc(t, "budget", elf, "--entry", "bad_callee")
	if code != exitCheck || !strings.Contains(errOut, "cannot bound bad_callee: fwsim: wcet: clobber_ret: ") ||
		!strings.Contains(errOut, "(clobber_ret+0x2): return address not preserved: ret (c:jalr zero, 0(ra))") {
		t.Errorf("bad_callee: exit %d, %q; want exit 1 naming clobber_ret's ret", code, errOut)
	}
	code, out, errOut = nicc(t, "budget", elf, "--entry", "saved_call")
	if code != exitOK || line(out, "verdict") != "verdict fits" {
		t.Errorf("saved_call: exit %d %s\n%s", code, errOut, out)
	}
}

// TestBudgetLoopHeadNames: a loop reached by a jump into another function's code is named by
// the function that holds it; a bound one too low is a bound the code exceeds, with the head
// and the count, not an internal error.
func TestBudgetLoopHeadNames(t *testing.T) {
	elf := firmware(t, "shapes.S", "-O2")
	code, _, errOut := nicc(t, "budget", elf, "--entry", "tail_into")
	if code != exitCheck || !strings.Contains(errOut, "(count_up+0x2): loop without a bound") ||
		!strings.HasSuffix(errOut, "(pass --loop-bound count_up+0x2=N)\n") || strings.Contains(errOut, "0xffff") {
		t.Errorf("tail_into: exit %d %q; want the head named count_up+0x2", code, errOut)
	}
	vecs := writeFile(t, "v.txt", "1\n5\n")
	code, out, errOut := nicc(t, "budget", elf, "--entry", "tail_into", "--loop-bound", "count_up+0x2=6", "--vectors", vecs)
	if code != exitOK || !strings.Contains(out, "\nloops\n  count_up+0x2 ") || line(out, "tightness") != "tightness 1.000 (WCET ÷ max measured)" {
		t.Errorf("bound 6: exit %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = nicc(t, "budget", elf, "--entry", "tail_into", "--loop-bound", "count_up+0x2=5", "--vectors", vecs)
	want := vecs + " line 2: loop head count_up+0x2 ran 6 times in one entry into the loop, more than its --loop-bound of 5: the bound is too low, so the WCET of "
	if code != exitCheck || out != "" || !strings.HasPrefix(errOut, "nicc: "+want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "INTERNAL") {
		t.Errorf("bound 5: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, want)
	}

	// gcc -O0's loop: popcount16's head runs 17 times; 16 is one too low.
	elf = firmware(t, "loop.c", "-O0")
	head := loopHeadArg(t, elf, "popcount16")
	code, _, errOut = nicc(t, "budget", elf, "--entry", "popcount16", "--loop-bound", head+"=16", "--vectors", writeFile(t, "p.txt", "0xffff\n"))
	want = " line 1: loop head " + head + " ran 17 times in one entry into the loop, more than its --loop-bound of 16: the bound is too low"
	if code != exitCheck || !strings.Contains(errOut, want) {
		t.Errorf("popcount16 bound 16: exit %d %q; want exit 1 and %q", code, errOut, want)
	}
}
