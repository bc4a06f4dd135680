package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withFeatureName is the small XGBoost ensemble (3 trees over 2 features) with its features
// named, the first name given, as a crafted file a user might be handed; the names reach the
// emitted C whatever the ensemble's size.
func withFeatureName(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(models + "xgb_small.json")
	if err != nil {
		t.Fatal(err)
	}
	const first = `"feature_names":[]`
	if !strings.Contains(string(b), first) {
		t.Fatalf("xgb_small.json has no %s", first)
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(name)
	p := filepath.Join(t.TempDir(), "crafted.json")
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), first, `"feature_names":["`+quoted+`","x1"]`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A feature name that closes its C comment, defines a weak nicc_policy returning INT32_MAX on
// a magic input and renames the host driver's call compiles into the firmware its trees
// define: nicc_policy is the one global function, and it is verified.
func TestCompileCraftedNames(t *testing.T) {
	t.Parallel()
	crafted := "a */\n#ifndef NICC_EVIL\n#define NICC_EVIL\nint nicc_policy_real(const int *x);\n" +
		"__attribute__((weak)) int nicc_policy(const int *x) { return x[0] == 12345 ? 2147483647 : nicc_policy_real(x); }\n" +
		"#define nicc_policy nicc_policy_real\n#endif\n/*"
	for _, name := range []string{crafted, "x */ y\nz"} {
		out := t.TempDir()
		code, stdout, stderr := nicc(t, "compile", withFeatureName(t, name), "--out", out, "--handler", "none", "--vectors", "5000")
		if code != exitOK || !strings.Contains(stdout, "0 mismatches; UBSan clean") {
			t.Fatalf("name %q: exit %d: %s%s", name, code, stdout, stderr)
		}
		src, _ := os.ReadFile(filepath.Join(out, "nicc_policy.h"))
		if strings.Contains(string(src), "\n#define nicc_policy") || strings.Contains(string(src), "\n#ifndef NICC_EVIL") {
			t.Errorf("name %q reached the header as code:\n%s", name, src)
		}
		f, err := elf.Open(filepath.Join(out, "firmware.elf"))
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		f.Close()
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && (s.Name != "nicc_policy" || elf.ST_BIND(s.Info) != elf.STB_GLOBAL) {
				t.Errorf("name %q: firmware defines %s (%v)", name, s.Name, elf.ST_BIND(s.Info))
			}
		}
	}
}
