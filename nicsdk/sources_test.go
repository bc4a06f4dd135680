package nicsdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// strictC are the warning flags every nicsdk source compiles clean under.
var strictC = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"}

func TestSourcesCompileStrict(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSources(dir); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "only_headers.c")
	os.WriteFile(src, []byte("#include \"rlcc.h\"\nint nicc_unused;\n"), 0o644)
	args := append(append([]string{}, strictC...), "-O2", "-c", "-o", filepath.Join(dir, "h.o"), src)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s (run `go tool task setup`)", args, err, out)
	}
	if out, err := exec.Command(CC, append(args, "-march=rv64imc_zbb", "-mabi=lp64", "-ffreestanding")...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s (run `go tool task setup`)", CC, args, err, out)
	}
}
