package nicsdk

// The two builds of rlcc.h the bit-identity tests compare the Go twins against: a host
// driver (gcc, strict warnings, -fsanitize=undefined -fno-sanitize-recover=all) that maps
// records of 32-bit words on stdin to result words on stdout, and a RISC-V ELF
// (testdata/fw.c, built with Build and link.ld) whose entry points fwsim calls. The tools
// come from Debian; a missing one fails the test with `go tool task setup`, never skips.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
)

// buildDir holds everything the tests build, shared by all tests of one run.
var buildDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "nicsdk-test-")
	if err != nil {
		return "", err
	}
	if err := WriteSources(dir); err != nil {
		return "", err
	}
	for _, n := range []string{"testpolicy.h", "driver.c", "fw.c", "handler.c", "handler_ex.c", "handler_state.c", "handler_layout.c", "handler_wcet.c"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return "", err
		}
	}
	glue := "/* handler_glue.h: written by harness_test.go, HandlerC(DefaultParams(), DefaultLayout, PolicyEntry). */\n" + HandlerC(DefaultParams(), DefaultLayout, PolicyEntry)
	if err := os.WriteFile(filepath.Join(dir, "handler_glue.h"), []byte(glue), 0o644); err != nil {
		return "", err
	}
	glue = "/* handler_state_glue.h: written by harness_test.go, HandlerExC(DefaultParams(), DefaultLayout, PolicyEntry, 2, OutM). */\n" +
		HandlerExC(DefaultParams(), DefaultLayout, PolicyEntry, 2, OutM)
	if err := os.WriteFile(filepath.Join(dir, "handler_state_glue.h"), []byte(glue), 0o644); err != nil {
		return "", err
	}
	// handler_ex.c in each configuration exConfigs lists, as hxName(words, out).c.
	for _, c := range exConfigs {
		name := hxName(c.words, c.out)
		glue := fmt.Sprintf("/* %s_glue.h: written by harness_test.go, HandlerExC(DefaultParams(), DefaultLayout, \"test_policy_st\", %d, %s). */\n",
			name, c.words, c.out.C()) + HandlerExC(DefaultParams(), DefaultLayout, "test_policy_st", c.words, c.out)
		src := fmt.Sprintf("/* %s.c: written by harness_test.go. */\n#define HX_WORDS %d\n#define HX_OUT %s\n#define HX_GLUE \"%s_glue.h\"\n#include \"handler_ex.c\"\n",
			name, c.words, c.out.C(), name)
		if err := os.WriteFile(filepath.Join(dir, name+"_glue.h"), []byte(glue), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".c"), []byte(src), 0o644); err != nil {
			return "", err
		}
	}
	// handler_layout.c in each configuration layoutConfigs lists, as c.name().c.
	for _, c := range layoutConfigs {
		name := c.name()
		src := fmt.Sprintf("/* %s.c: written by harness_test.go. */\n#define HL_WORDS %d\n#define HL_OUT %s\n#define HL_N %d\n#define HL_GLUE \"%s_glue.h\"\n#include \"handler_layout.c\"\n",
			name, c.words, c.out.C(), c.l.Inputs(), name)
		glue := fmt.Sprintf("/* %s_glue.h: written by harness_test.go, %s. */\n", name, c.glueCall()) + c.glue()
		if err := os.WriteFile(filepath.Join(dir, name+"_glue.h"), []byte(glue), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".c"), []byte(src), 0o644); err != nil {
			return "", err
		}
	}
	// handler_wcet.c for each layout of wcetLayouts, as hwName(l).c.
	for _, l := range wcetLayouts {
		name := hwName(l)
		src := fmt.Sprintf("/* %s.c: written by harness_test.go, HandlerC(DefaultParams(), {%d, %#x}, PolicyEntry). */\n#define HW_N %d\n#include \"handler_wcet.c\"\n%s",
			name, l.History, uint8(l.Features), l.Inputs(), HandlerC(DefaultParams(), l, PolicyEntry))
		if err := os.WriteFile(filepath.Join(dir, name+".c"), []byte(src), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := buildDir(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func mustDir(tb testing.TB) string {
	tb.Helper()
	dir, err := buildDir()
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// hostFlags build the driver: strict C99 and the undefined-behaviour sanitizer, which stops
// the driver (non-zero exit) at the first finding.
var hostFlags = append(append([]string{}, strictC...),
	"-O2", "-fsanitize=undefined", "-fno-sanitize-recover=all")

var hostDriver = sync.OnceValues(func() (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "driver")
	args := append(append([]string{}, hostFlags...), "-I", dir, "-o", out, filepath.Join(dir, "driver.c"))
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %v: %v\n%s(gcc is needed: run `go tool task setup`)", args, err, msg)
	}
	return out, nil
})

// host runs the driver in mode on the words in, and returns the words it wrote.
func host(tb testing.TB, mode string, in []uint32) []uint32 {
	tb.Helper()
	drv, err := hostDriver()
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, 4*len(in))
	for i, w := range in {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	// The records go in and out through files, not pipes: one write and one read of each
	// instead of a copy per pipe buffer on both sides.
	stdin, err := os.CreateTemp(filepath.Dir(drv), "host-in-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(stdin.Name())
	defer stdin.Close()
	if _, err := stdin.Write(b); err != nil {
		tb.Fatal(err)
	}
	if _, err := stdin.Seek(0, io.SeekStart); err != nil {
		tb.Fatal(err)
	}
	stdout, err := os.CreateTemp(filepath.Dir(drv), "host-out-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	cmd := exec.Command(drv, mode)
	cmd.Stdin, cmd.Stdout = stdin, stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err != nil || stderr.Len() > 0 {
		tb.Fatalf("driver %s: %v\n%s", mode, err, stderr.Bytes())
	}
	out, err := os.ReadFile(stdout.Name())
	if err != nil {
		tb.Fatal(err)
	}
	if len(out)%4 != 0 {
		tb.Fatalf("driver %s: %d bytes of output", mode, len(out))
	}
	words := make([]uint32, len(out)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(out[4*i:])
	}
	return words
}

// elfFlags build the RISC-V test firmware, after FirmwareFlags.
var elfFlags = append(append([]string{}, strictC...), "-O2")

// firmware builds testdata/NAME.c (with the nicsdk sources and link.ld) and loads it.
func firmware(tb testing.TB, name string) *fwsim.Image {
	tb.Helper()
	im, err := firmwareOnce(name)()
	if err != nil {
		tb.Fatal(err)
	}
	return im
}

var (
	fwMu    sync.Mutex
	fwCache = map[string]func() (*fwsim.Image, error){}
)

func firmwareOnce(name string) func() (*fwsim.Image, error) {
	fwMu.Lock()
	defer fwMu.Unlock()
	if f, ok := fwCache[name]; ok {
		return f
	}
	f := sync.OnceValues(func() (*fwsim.Image, error) {
		dir, err := buildDir()
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, name+".elf")
		extra := append(append([]string{}, elfFlags...), "-I", dir)
		if err := Build(out, filepath.Join(dir, LinkerScriptName), extra, filepath.Join(dir, name+".c")); err != nil {
			return nil, fmt.Errorf("%v\n(run `go tool task setup` if the compiler is missing)", err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			return nil, err
		}
		return fwsim.LoadELF(data)
	})
	fwCache[name] = f
	return f
}

// sim is a machine on the test firmware.
type sim struct {
	tb testing.TB
	m  *fwsim.Machine
}

func newSim(tb testing.TB) *sim {
	tb.Helper()
	m, err := fwsim.NewMachine(firmware(tb, "fw"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &sim{tb, m}
}

// call runs entry; 32-bit arguments are passed sign-extended, as the RISC-V LP64 ABI
// wants (use w for uint32, s for int32). It returns a0's low 32 bits.
func (s *sim) call(entry string, args ...uint64) uint32 {
	s.tb.Helper()
	res, err := s.m.Call(entry, args...)
	if err != nil {
		s.tb.Fatalf("%s%v: %v", entry, args, err)
	}
	return uint32(res.A0)
}

func w(v uint32) uint64 { return uint64(int64(int32(v))) }
func s(v int32) uint64  { return uint64(int64(v)) }

// alloc places b in emulator memory and returns its address.
func (s *sim) alloc(b []byte, align uint64) uint64 {
	s.tb.Helper()
	a, err := s.m.Alloc(uint64(len(b)), align)
	if err != nil {
		s.tb.Fatal(err)
	}
	if err := s.m.WriteBytes(a, b); err != nil {
		s.tb.Fatal(err)
	}
	return a
}

func (s *sim) read(addr uint64, n int) []byte {
	s.tb.Helper()
	b := make([]byte, n)
	if err := s.m.ReadBytes(addr, b); err != nil {
		s.tb.Fatal(err)
	}
	return b
}

// paramsBytes is struct rlcc_params in memory.
func paramsBytes(p Params) []byte {
	var b []byte
	for _, w := range paramsWords(p) {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

func paramsWords(p Params) []uint32 {
	return []uint32{p.Target, p.Beta, p.Scale, p.MinRate, p.InitRate, p.BaseRTT}
}
