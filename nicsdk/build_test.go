package nicsdk

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ld = "../fwsim/testdata/wcet/link.ld"

func TestBuildMakesRISCVFirmware(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "f.c")
	// A 64-bit division pulls nothing from libgcc on rv64; a 128-bit one needs __divti3.
	os.WriteFile(src, []byte("unsigned __int128 f(unsigned __int128 a, unsigned __int128 b) { return a / b; }\n"), 0o644)
	out := filepath.Join(dir, "f.elf")
	if err := Build(out, ld, []string{"-O2", "-Wall", "-Werror"}, src); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_RISCV || f.Class != elf.ELFCLASS64 {
		t.Errorf("machine %v, class %v: want RV64", f.Machine, f.Class)
	}
	syms, _ := f.Symbols()
	found := false
	for _, s := range syms {
		found = found || s.Name == "__udivti3"
	}
	if !found {
		t.Error("libgcc's __udivti3 was not linked")
	}
}

func TestBuildErrorShowsCompilerOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "bad.c")
	os.WriteFile(src, []byte("int f(void) { return undeclared; }\n"), 0o644)
	err := Build(filepath.Join(dir, "bad.elf"), ld, nil, src)
	if err == nil || !strings.Contains(err.Error(), "undeclared") || !strings.Contains(err.Error(), CC) {
		t.Errorf("error %v: want the command and the compiler's message", err)
	}
}
