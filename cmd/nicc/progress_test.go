package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal of 24×120: what the CLI writes to tty, the test reads from
// the returned buffer once done is called.
func openPTY(t *testing.T) (tty *os.File, done func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
			t.Fatalf("ioctl %#x: %v", req, e)
		}
	}
	var unlock int32
	ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	var n uint32
	ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n))
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws := [4]uint16{24, 120, 0, 0}
	ioctl(tty, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	var got bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&got, master) // ends with EIO when the terminal closes
		close(read)
	}()
	return tty, func() string {
		tty.Close()
		<-read
		master.Close()
		return got.String()
	}
}

// Progress bars go to standard error when it is a terminal, the build stage counting its
// three builds; never to standard output, never with --json, never when standard error is
// not a terminal. Where no bar may show, the compile is the small model's, which runs the
// same stages (fit, build, verify) in a fraction of the time.
// freshRTT counts the base RTTs TestProgressGoesToTerminalStderr has taken.
var freshRTT atomic.Int64

func TestProgressGoesToTerminalStderr(t *testing.T) {
	args := []string{"nicc", "compile", models + "xgb_small.json", "--handler", "none", "--vectors", "1000"}

	tty, done := openPTY(t)
	var stdout, stderr bytes.Buffer
	// The verify bar draws on its first call (0 of N: progressbar throttles redraws, not the
	// first one), so the count of vectors is not what shows it; 20000 (about 0.2 s of verify,
	// where 100000 took 1 s) still run past the bars' 0.1 s throttle, so the bar redraws too.
	// A base RTT no other compile of this process has: its sources are new, so its three
	// builds run gcc (the compiler keeps the builds it made, buildcache/buildcache.go) and take
	// long enough for the bar to count them.
	baseRTT := fmt.Sprintf("4.%03d", freshRTT.Add(1)%1000)
	code := run([]string{"nicc", "compile", models + "rlcc_xgb.json", "--form", "walk", "--vectors", "20000", "--rlcc-base-rtt", baseRTT, "--out", t.TempDir()}, &stdout, tty)
	bars := done()
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, bars)
	}
	// The bar redraws at most every 0.1 s: two builds finishing closer than that show as one
	// step (the compiler's tests check each is told).
	if !strings.Contains(bars, "build ") || !strings.Contains(bars, "verify ") ||
		!strings.Contains(bars, "(1/3)") && !strings.Contains(bars, "(2/3)") {
		t.Errorf("the terminal on stderr shows no build bar counting builds, or no verify bar:\n%q", bars)
	}
	if strings.ContainsAny(stdout.String(), "\r█") || !strings.HasPrefix(stdout.String(), "model ") {
		t.Errorf("stdout has more than the summary:\n%q", stdout.String())
	}

	tty, done = openPTY(t)
	code = run(append(args, "--out", t.TempDir()), tty, &stderr)
	out := done()
	if code != exitOK || stderr.Len() != 0 || strings.ContainsAny(out, "█") || !strings.HasPrefix(out, "model ") {
		t.Errorf("stdout a terminal, stderr not: exit %d, stderr %q, stdout %q", code, stderr.String(), out)
	}

	tty, done = openPTY(t)
	stdout.Reset()
	code = run(append(args, "--out", t.TempDir(), "--json"), &stdout, tty)
	if bars := done(); code != exitOK || bars != "" || !strings.HasPrefix(stdout.String(), "{") {
		t.Errorf("--json: exit %d, stderr terminal got %q", code, bars)
	}
}
