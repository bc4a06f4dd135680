package nicsdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strictC are the warning flags every nicsdk source compiles clean under.
var strictC = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"}

func TestSourcesCompileStrict(t *testing.T) {
	t.Parallel()
	// testdata/fw.c and handler.c use every function of rlcc.h; the headers alone must
	// compile too (nothing unused warns). Host gcc and the cross compiler, at every level.
	dir := mustDir(t)
	only := filepath.Join(dir, "only_headers.c")
	os.WriteFile(only, []byte("#include \"rlcc.h\"\nint nicc_unused;\n"), 0o644)
	rv := []string{"-march=rv64imc_zbb", "-mabi=lp64", "-ffreestanding"}
	// Each compiler and level is a parallel subtest with its own object file.
	for _, cc := range []string{"gcc", CC} {
		for _, opt := range []string{"-O0", "-O1", "-O2", "-Os", "-O3"} {
			t.Run(cc+opt, func(t *testing.T) {
				t.Parallel()
				obj := filepath.Join(dir, "x"+strings.ReplaceAll(cc+opt, "-", "_")+".o")
				for _, src := range []string{only, "fw.c", "handler.c", "hx_0_y.c", "hx_6_m.c"} {
					args := append(append([]string{}, strictC...), opt, "-I", dir, "-c", "-o", obj, filepath.Join(dir, filepath.Base(src)))
					if cc == CC {
						args = append(args, rv...)
					}
					if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
						t.Errorf("%s %s: %v\n%s(run `go tool task setup` if the compiler is missing)", cc, strings.Join(args, " "), err, out)
					}
				}
			})
		}
	}
}

func TestSources(t *testing.T) {
	t.Parallel()
	src := Sources()
	for _, n := range []string{HeaderName, RLCCHeaderName, LinkerScriptName} {
		if len(src[n]) == 0 {
			t.Errorf("Sources()[%q] is empty", n)
		}
	}
	if len(src) != 3 {
		t.Errorf("Sources() has %d files", len(src))
	}
	if string(src[LinkerScriptName]) != string(LinkerScript) {
		t.Error("LinkerScript differs from Sources()[link.ld]")
	}
	src[HeaderName][0] ^= 1
	if Sources()[HeaderName][0] == src[HeaderName][0] {
		t.Error("Sources() shares its bytes between calls")
	}
	dir := t.TempDir()
	if err := WriteSources(dir); err != nil {
		t.Fatal(err)
	}
	for n, b := range Sources() {
		got, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || string(got) != string(b) {
			t.Errorf("WriteSources: %s: %v", n, err)
		}
	}
	if err := WriteSources(filepath.Join(dir, "missing")); err == nil {
		t.Error("WriteSources into a missing directory succeeded")
	}
}

// TestLinkerSymbols: LinkerSymbols lists every symbol link.ld assigns.
func TestLinkerSymbols(t *testing.T) {
	t.Parallel()
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s*([A-Za-z_$][A-Za-z0-9_$]*)\s*=`).FindAllStringSubmatch(string(LinkerScript), -1) {
		got = append(got, m[1])
	}
	if d := cmp.Diff(LinkerSymbols, got); d != "" {
		t.Errorf("LinkerSymbols against link.ld's assignments (-want +got):\n%s", d)
	}
}
