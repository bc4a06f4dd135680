package abi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// policyC is a small stateful policy: it keeps a running sum of x[1] in state[0] and returns
// a multiplier-ish y from the window's inputs, so the handler's decisions vary.
const policyC = `
static int32_t pol(const int32_t *x, uint32_t *state)
{
	state[0] += (uint32_t)x[1];
	return (x[1] > 2 * 65536) ? -40000 : 30000 - (x[0] >> 2);
}
int32_t nicc_policy(const int32_t *x, uint32_t *state) { return pol(x, state); }
`

// buildFirmware writes nicsdk's sources and a handler around policyC, and builds the ELF.
func buildFirmware(t *testing.T, p nicsdk.Params) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range nicsdk.Sources() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "#include <stdint.h>\n#include \"" + nicsdk.RLCCHeaderName + "\"\n" + policyC +
		nicsdk.HandlerExC(p, nicsdk.DefaultLayout, "pol", 1, nicsdk.OutY)
	path := filepath.Join(dir, "fw.c")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	elf := filepath.Join(dir, "fw.elf")
	if err := nicsdk.Build(elf, filepath.Join(dir, nicsdk.LinkerScriptName), []string{"-O2", "-Wall", "-Werror", "-I", dir}, path); err != nil {
		t.Fatal(err)
	}
	return elf
}

func goPolicy(x [4]int32, state []uint32) int32 {
	state[0] += uint32(x[1])
	if x[1] > 2*65536 {
		return -40000
	}
	return 30000 - (x[0] >> 2)
}

// TestFirmwareMatchesTheTwin runs a stream of events through the firmware and through
// nicsdk's Go twin of the handler: the same rates and contexts, call by call, and each call's
// cycles counted.
func TestFirmwareMatchesTheTwin(t *testing.T) {
	p := nicsdk.DefaultParams()
	f, err := Load(buildFirmware(t, p), "dpa", Shape{Inputs: 4, StateWords: 1, Handler: true})
	if err != nil {
		t.Fatal(err)
	}
	var fwCtx, goCtx nicsdk.FlowCtx
	for i := range 200 {
		ev := nicsdk.Event{Type: nicsdk.EvRTT, RTTNs: uint32(8000 + 300*(i%37)), TimestampNs: uint64(i) * 8000, FlowID: 3}
		if i%5 == 4 {
			ev = nicsdk.Event{Type: nicsdk.EvTX, TimestampNs: uint64(i) * 8000, FlowID: 3, TxBytes: 4096}
		}
		rate, cycles, err := f.Decide(ev, &fwCtx)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		want := nicsdk.OnEventEx(ev, &goCtx, p, 1, nicsdk.OutY, goPolicy)
		if rate != want || fwCtx != goCtx {
			t.Fatalf("event %d (%+v): firmware rate %d ctx %v; twin %d %v", i, ev, rate, fwCtx, want, goCtx)
		}
		if cycles == 0 {
			t.Fatalf("event %d: 0 cycles", i)
		}
	}
	state := []uint32{7}
	y, cycles, err := f.Policy([]int32{4, 3 * 65536, 0, 0}, state)
	if err != nil || y != -40000 || state[0] != 7+3*65536 || cycles == 0 {
		t.Fatalf("Policy: y %d, state %v, cycles %d, err %v", y, state, cycles, err)
	}
	if _, _, err := f.Policy([]int32{0, 0, 0, 0}, nil); err == nil {
		t.Fatal("Policy with no state words for a stateful policy: no error")
	}
}

func TestLoadRefuses(t *testing.T) {
	elf := buildFirmware(t, nicsdk.DefaultParams())
	if _, err := Load(elf, "no-such-core", Shape{Inputs: 4}); err == nil {
		t.Error("an unknown core: no error")
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.elf"), "dpa", Shape{Inputs: 4}); err == nil {
		t.Error("a missing ELF: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad.elf")
	if err := os.WriteFile(bad, []byte("\x7fELF\x02\x01\x01 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad, "dpa", Shape{Inputs: 4}); err == nil {
		t.Error("a malformed ELF: no error")
	}
	f, err := Load(elf, "dpa", Shape{Inputs: 4, StateWords: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ctx nicsdk.FlowCtx
	if _, _, err := f.Decide(nicsdk.Event{}, &ctx); err == nil {
		t.Error("Decide on firmware loaded without the handler: no error")
	}
}

func TestLoadNeedsTheEntries(t *testing.T) {
	dir := t.TempDir()
	for name, b := range nicsdk.Sources() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("#include <stdint.h>\nint32_t other(const int32_t *x) { return x[0]; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	elf := filepath.Join(dir, "p.elf")
	if err := nicsdk.Build(elf, filepath.Join(dir, nicsdk.LinkerScriptName), []string{"-O2"}, src); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(elf, "dpa", Shape{Inputs: 1}); !errors.Is(err, fwsim.ErrNoSymbol) {
		t.Fatalf("an ELF without %s: %v, want fwsim.ErrNoSymbol", EntryPolicy, err)
	}
}
