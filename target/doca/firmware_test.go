package doca

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

const policyC = `
static int32_t pol(const int32_t *x)
{
	return (x[1] > 2 * 65536) ? -40000 : 30000 - (x[0] >> 2);
}
`

func goPolicy(x [4]int32, _ []uint32) int32 {
	if x[1] > 2*65536 {
		return -40000
	}
	return 30000 - (x[0] >> 2)
}

// buildProgram builds a DOCA program around policyC against nicc's stand-in.
func buildProgram(t *testing.T, p nicsdk.Params) string {
	t.Helper()
	dir := t.TempDir()
	files := nicsdk.Sources()
	for name, b := range nicsdk.DOCASources() {
		files[name] = b
	}
	files["prog.c"] = []byte("#include <stdint.h>\n#include \"" + nicsdk.DOCAShimHeaderName + "\"\n#include \"" + nicsdk.DOCAHeaderName + "\"\n" + policyC +
		nicsdk.DOCAEntriesC(p, "pol", 0, nicsdk.OutY))
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	elf := filepath.Join(dir, "prog.elf")
	if err := nicsdk.Build(elf, filepath.Join(dir, nicsdk.LinkerScriptName), []string{"-O2", "-DNICC_DOCA_SHIM", "-I", dir},
		filepath.Join(dir, "prog.c"), filepath.Join(dir, nicsdk.DOCAShimSourceName)); err != nil {
		t.Fatal(err)
	}
	return elf
}

// TestProgramMatchesTheTwin: init, a parameter change and a stream of events through the
// program in fwsim and through nicsdk's DOCARuntime agree on every result, context, table
// row and counter.
func TestProgramMatchesTheTwin(t *testing.T) {
	p := nicsdk.DefaultParams()
	f, err := Load(buildProgram(t, p), "dpa")
	if err != nil {
		t.Fatal(err)
	}
	twin := &nicsdk.DOCARuntime{Compiled: p}
	mask, err := f.Init()
	if err != nil || mask != twin.Init() {
		t.Fatalf("Init: mask %#x (twin %#x), %v", mask, nicsdk.DOCADisabledEvents, err)
	}
	vals := []uint32{p.Target * 2}
	status, row, err := f.SetParams(1, nicsdk.DOCASlot, nicsdk.DOCAParamTarget, vals)
	if err != nil || status != twin.SetParams(1, nicsdk.DOCASlot, nicsdk.DOCAParamTarget, vals) {
		t.Fatalf("SetParams: status %d, %v", status, err)
	}
	if want := twin.ParamsOf(1, nicsdk.DOCASlot); !slices.Equal(row, want[:]) {
		t.Fatalf("port 1's row %v, twin %v", row, want)
	}
	if got, err := f.Params(1, nicsdk.DOCASlot); err != nil || !slices.Equal(got, row) {
		t.Fatalf("Params: %v, %v; SetParams left %v", got, err, row)
	}
	var goCtx nicsdk.FlowCtx
	if err := f.SetContext(goCtx); err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		port := uint8(i % 2)
		ev := nicsdk.DOCAEvent{Type: nicsdk.DOCAEvRTT, Port: port, FlowTag: 5, Timestamp: uint32(i) * 8000,
			ReqSend: uint32(i) * 8000, ReqRecv: uint32(i)*8000 + 4000, RespSend: uint32(i)*8000 + 4100}
		if i%4 == 3 {
			ev = nicsdk.DOCAEvent{Type: nicsdk.DOCAEvTX, Port: port, FlowTag: 5, Timestamp: uint32(i) * 8000}
		}
		r, err := f.Algo(ev, nicsdk.DOCASlot, false)
		if err != nil || r.Cycles == 0 {
			t.Fatalf("event %d: %v (cycles %d)", i, err, r.Cycles)
		}
		rate, rttReq := twin.Algo(ev, nicsdk.DOCASlot, &goCtx, 0, nicsdk.OutY, goPolicy)
		res, err := f.Results()
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := f.Context()
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != rate || res[1] != rttReq || ctx != goCtx {
			t.Fatalf("event %d (%+v): program rate %d rtt_req %d ctx %v; twin %d %d %v", i, ev, res[0], res[1], ctx, rate, rttReq, goCtx)
		}
	}
	for port := range uint32(2) {
		got, err := f.Counters(port, nicsdk.DOCASlot)
		want := twin.CountersOf(port, nicsdk.DOCASlot)
		if err != nil || !slices.Equal(got, want[:]) || got[nicsdk.DOCACounterDecisions] == 0 {
			t.Fatalf("port %d counters %v (%v), twin %v", port, got, err, want)
		}
	}
}

func TestLoadRefusesAnotherProgram(t *testing.T) {
	// nicc's own firmware has no stand-in tables: Load names the one it misses.
	dir := t.TempDir()
	for name, b := range nicsdk.Sources() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("#include <stdint.h>\nint32_t nicc_policy(const int32_t *x) { return x[0]; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	elf := filepath.Join(dir, "p.elf")
	if err := nicsdk.Build(elf, filepath.Join(dir, nicsdk.LinkerScriptName), []string{"-O2"}, src); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(elf, "dpa"); err == nil {
		t.Fatal("a program without the stand-in's tables loaded")
	}
}

// TestEngineMatchesTheTwin: the program opened as a target.Engine (Target.Open, Boot, Start,
// Decide) hands each nicsdk event to the algorithm as the DOCA event of slot 0, port 0 at the
// event's time, with an RTT event's request sent its RTT before: the rate and the context are
// the twin's on those DOCA events, across the 32-bit wrap of the device's clock.
func TestEngineMatchesTheTwin(t *testing.T) {
	p := nicsdk.DefaultParams()
	e, err := Target.Open(buildProgram(t, p), "dpa")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Boot(); err != nil {
		t.Fatal(err)
	}
	twin := &nicsdk.DOCARuntime{Compiled: p}
	twin.Init()
	var ctx, goCtx nicsdk.FlowCtx
	ctx[3] = 7 // Start zeroes what the last flow left
	if rate := e.Start(&ctx, p, nicsdk.DefaultLayout); rate != p.InitRate || ctx != (nicsdk.FlowCtx{}) {
		t.Fatalf("Start: rate %d, ctx %v; want the init rate %d and a zeroed context", rate, ctx, p.InitRate)
	}
	types := []nicsdk.EventType{nicsdk.EvRTT, nicsdk.EvTX, nicsdk.EvCNP, nicsdk.EvRTT, nicsdk.EvNACK}
	start := uint64(1<<32 - 100_000)
	for i := range 120 {
		ev := nicsdk.Event{Type: types[i%len(types)], FlowID: 9, TimestampNs: start + uint64(i)*8000}
		if ev.Type == nicsdk.EvRTT {
			ev.RTTNs = 4000 + uint32(i)*300
		}
		rate, cycles, err := e.Decide(ev, &ctx)
		if err != nil || cycles == 0 {
			t.Fatalf("event %d: %v (cycles %d)", i, err, cycles)
		}
		dt, _ := nicsdk.DOCAEventType(ev.Type)
		dev := nicsdk.DOCAEvent{Type: dt, FlowTag: 9, Timestamp: uint32(ev.TimestampNs)}
		if ev.Type == nicsdk.EvRTT {
			dev.ReqSend = dev.Timestamp - ev.RTTNs
		}
		want, _ := twin.Algo(dev, nicsdk.DOCASlot, &goCtx, 0, nicsdk.OutY, goPolicy)
		if rate != want || ctx != goCtx {
			t.Fatalf("event %d (%+v): rate %d ctx %v; twin %d %v", i, ev, rate, ctx, want, goCtx)
		}
	}
	if ctx == (nicsdk.FlowCtx{}) {
		t.Fatal("the context never changed")
	}
}
