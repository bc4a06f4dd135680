package lab

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/abi"
	"github.com/nicc-dev/nicc/target/doca"
)

// compiledForSim is a copy, in a temporary directory of the test's own (which it may change),
// of model's compile for the closed-loop tests; the compile runs once a package run. Every
// form computes the same decisions, so it is the branch form, which builds once.
func compiledForSim(t *testing.T, model string, int8 bool) string {
	t.Helper()
	opt := compiler.CompileOptions{Model: model, Form: "branch", Vectors: 2000, Seed: 1}
	if int8 {
		opt.Int8 = &golden.Int8Options{}
	}
	_, src := compileOnce(t, fmt.Sprintf("sim %s int8 %v", model, int8), opt)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Firmware in the loop equals the golden model in the loop: with the decision latency fixed
// to the same value, the same seed gives the same run, bit for bit, for trees (y) and for an
// LSTM (state words in the context, the multiplier folded into its table).
func TestSimFirmwareEqualsGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model string
		int8  bool
	}{{rlccXGB, false}, {"../testdata/models/rlcc_lstm.onnx", true}} {
		dir := compiledForSim(t, c.model, c.int8)
		run := func(golden bool) *SimReport {
			r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 16, Policy: dir, Golden: golden, LatencyNs: 500,
				Net: netsim.Config{DurationNs: 3_000_000, Seed: 5, BufferBytes: 512 << 10}})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		// A 512 KiB buffer: with the default 5 MB one, 3 ms do not get past the start's
		// line-rate burst (64 decisions in the window, all at the longest queue).
		fw, golden := run(false), run(true)
		if fw.Decisions < 200 || fw.SimEvents == 0 {
			t.Fatalf("%s: too few decisions in the window: %+v", c.model, fw.Result)
		}
		a, b := *fw.Result, *golden.Result
		a.Controller, b.Controller = "", ""
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: firmware and golden model in the loop differ:\n%+v\n%+v", c.model, a, b)
		}
		t.Logf("%s 16→1, 500 ns decisions: SU %.2f%%, Jain %.4f, QL %.2f µs, %d decisions: firmware == golden",
			c.model, a.Utilization, a.Jain, a.QueueMeanUs, a.Decisions)
	}
}

// With its measured latency, the firmware's decisions take its cycles: on the dpa profile a
// few hundred ns, and no event is dropped at 16 flows.
func TestSimFirmwareMeasuredLatency(t *testing.T) {
	t.Parallel()
	dir := compiledForSim(t, rlccXGB, false)
	r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 16, Policy: dir, Net: netsim.Config{DurationNs: 2_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Latency, "measured") || r.EventsDropped != 0 || r.Decisions == 0 {
		t.Errorf("latency %q, %d events dropped, %d decisions", r.Latency, r.EventsDropped, r.Decisions)
	}
}

func TestSimFloatTeacher(t *testing.T) {
	t.Parallel()
	r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 16, Policy: "../testdata/models/rlcc_teacher.onnx",
		Net: netsim.Config{DurationNs: 3_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Decisions == 0 || !strings.Contains(r.Decides, "float model") {
		t.Errorf("float teacher: %+v", r)
	}
	t.Logf("float teacher 16→1: SU %.2f%%, Jain %.4f, QL %.2f µs, DR %.3g Gb/s", r.Utilization, r.Jain, r.QueueMeanUs, r.DropGbps)
}

func TestSimBadInput(t *testing.T) {
	for _, c := range []struct {
		opt  SimOptions
		want string
	}{
		{SimOptions{Scenario: "fat-tree", Policy: "swift"}, `unknown scenario "fat-tree"`},
		{SimOptions{Scenario: "many-to-one", Flows: -1, Policy: "swift"}, "--flows -1"},
		{SimOptions{Scenario: "many-to-one", Policy: ""}, "sim needs --policy"},
		{SimOptions{Scenario: "many-to-one", Policy: "../testdata/models/xgb_small.json"}, "not the RL-CC observation window"},
		{SimOptions{Scenario: "many-to-one", Policy: "../testdata/models/rlcc_teacher.onnx", Golden: true}, "--golden takes a compile output directory"},
		{SimOptions{Scenario: "many-to-one", Policy: "swift", Net: netsim.Config{DurationNs: -5}}, "duration"},
		{SimOptions{Scenario: "many-to-one", Policy: "swift", Net: netsim.Config{LinkGbps: -1}}, "link rate"},
		{SimOptions{Scenario: "many-to-one", Policy: "swift", Net: netsim.Config{BufferBytes: -1}}, "buffer"},
	} {
		_, err := Sim(c.opt)
		var ce *budget.CheckError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ce) {
			t.Errorf("%+v: %v; want a bad-input error containing %q", c.opt, err, c.want)
		}
	}
}

// A firmware that traps stops the run with a check error naming the flow, the time and the
// pc, and no result: the nicc firmware, and the DOCA program (--sdk doca).
func TestSimFirmwareTrap(t *testing.T) {
	t.Parallel()
	_, docaDir := docaReport(t)
	docaCopy := t.TempDir()
	if err := os.CopyFS(docaCopy, os.DirFS(docaDir)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir string
		sdk target.Target
	}{
		{compiledForSim(t, rlccXGB, false), abi.Target},
		{docaCopy, doca.Target},
	} {
		breakEntry(t, filepath.Join(c.dir, c.sdk.ELF()), c.sdk.Entry())
		r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 2, Policy: c.dir, SDK: c.sdk, Net: netsim.Config{DurationNs: 1_000_000}})
		var ce *budget.CheckError
		if r != nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), "flow ") || !strings.Contains(err.Error(), " µs") ||
			!strings.Contains(err.Error(), c.sdk.Entry()+": pc") {
			t.Fatalf("trapping %s: %v, %v", c.sdk.ELF(), r, err)
		}
		t.Log(err)
	}
	// A program whose init traps is at fault as well (exit 1), not the user's input.
	initCopy := t.TempDir()
	if err := os.CopyFS(initCopy, os.DirFS(docaDir)); err != nil {
		t.Fatal(err)
	}
	breakEntry(t, filepath.Join(initCopy, artifact.DOCAFirmwareFile), nicsdk.DOCAEntryInit)
	r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 2, Policy: initCopy, SDK: doca.Target, Net: netsim.Config{DurationNs: 1_000_000}})
	var ce *budget.CheckError
	if r != nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), nicsdk.DOCAEntryInit) {
		t.Errorf("trapping %s: %v, %v", nicsdk.DOCAEntryInit, r, err)
	}
}

// A firmware whose handler returns a rate outside [min rate, line rate] (0, or 0xffffffff)
// is at fault, as one that traps: the run stops with a check error naming the entry and the
// rate, the nicc firmware's and the DOCA program's alike.
func TestSimFirmwareRateOutOfRange(t *testing.T) {
	t.Parallel()
	_, docaDir := docaReport(t)
	fw := compiledForSim(t, rlccXGB, false)
	for _, c := range []struct {
		dir  string
		sdk  target.Target
		code []byte // the entry's new first instructions
		want string
	}{
		// c.li a0, 0; c.ret
		{fw, abi.Target, []byte{0x01, 0x45, 0x82, 0x80}, "returned rate 0 (0x0)"},
		// c.li a0, -1; c.ret: the rate is a0's low 32 bits
		{fw, abi.Target, []byte{0x7d, 0x55, 0x82, 0x80}, "returned rate 4294967295 (0xffffffff)"},
		// c.ret: the results (a3) stay as the caller zeroed them
		{docaDir, doca.Target, []byte{0x82, 0x80}, "returned rate 0 (0x0)"},
		// c.li t0, -1; sw t0, 0(a3); c.ret
		{docaDir, doca.Target, []byte{0xfd, 0x52, 0x23, 0xa0, 0x56, 0x00, 0x82, 0x80}, "returned rate 4294967295 (0xffffffff)"},
	} {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(c.dir)); err != nil {
			t.Fatal(err)
		}
		patchEntry(t, filepath.Join(dir, c.sdk.ELF()), c.sdk.Entry(), c.code)
		r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 2, Policy: dir, SDK: c.sdk, Net: netsim.Config{DurationNs: 200_000}})
		var ce *budget.CheckError
		if r != nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), c.sdk.Entry()+" "+c.want) ||
			!strings.Contains(err.Error(), "outside [the min rate 1049, line rate 1048576] in fxp20: the firmware's fault") || !strings.Contains(err.Error(), "flow 0 at ") {
			t.Errorf("%s returning %s: %v, %v", c.sdk.Entry(), c.want, r, err)
		}
	}
}

// breakEntry writes an illegal instruction at the entry of function entry in the ELF at path.
func breakEntry(t *testing.T, path, entry string) {
	t.Helper()
	patchEntry(t, path, entry, []byte{0, 0, 0, 0})
}

// patchEntry writes code at the entry of function entry in the ELF at path.
func patchEntry(t *testing.T, path, entry string, code []byte) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	for _, s := range syms {
		if s.Name == entry {
			for _, p := range f.Progs {
				if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Filesz {
					off = int64(s.Value - p.Vaddr + p.Off)
				}
			}
		}
	}
	f.Close()
	if off < 0 {
		t.Fatalf("no %s in %s", entry, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[off:], code)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	reseal(t, filepath.Dir(path)) // a firmware as compile might have written it
}

// FuzzSimNetworkFlags: --fat-tree, --ecn, --swift and --dcqcn, whatever their text, give a
// tree, profile or parameters netsim accepts, or a one-line error naming the flag; never a
// panic.
func FuzzSimNetworkFlags(f *testing.F) {
	for _, s := range []string{"nic-paper", "4,16,3,4", "2,1,1,1", "1,4,2,1", "4,16", "auto", "off", "100KB,400KB,0.2", "1,2,1.5", "-1,2,0.5", "99999999MB,1,1", "", ",,,",
		"ai=0.5,beta=0.7", "g=0.1,timer-us=10", "fs-max-cwnd=0.01", "f=1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tree, err := ParseFatTree(s); err != nil {
			if !strings.HasPrefix(err.Error(), "--fat-tree ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseFatTree(%q): %v", s, err)
			}
		} else if _, err := netsim.FatTreeManyToOne(*tree, 1); err != nil {
			t.Errorf("ParseFatTree(%q) = %+v, which netsim refuses: %v", s, tree, err)
		}
		// --swift and --dcqcn: parameters within their bounds that netsim runs, or a
		// one-line error naming the flag.
		sw, dc := netsim.DefaultSwift, netsim.DefaultDCQCN
		for _, c := range []struct {
			flag   string
			params []netsim.Param
			ctrl   func() netsim.Controller
		}{{"--swift", sw.Params(), func() netsim.Controller { return sw }}, {"--dcqcn", dc.Params(), func() netsim.Controller { return dc }}} {
			got, err := setReferenceParams(c.flag, s, c.params)
			if err != nil {
				if !strings.HasPrefix(err.Error(), c.flag) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s %q: %v", c.flag, s, err)
				}
				continue
			}
			for i, p := range got {
				if q := c.params[i]; !(p.Value >= q.Min && p.Value <= q.Max) {
					t.Errorf("%s %q: %s = %v, outside [%v, %v]", c.flag, s, p.Name, p.Value, q.Min, q.Max)
				}
			}
			_, err = netsim.Run(netsim.Scenario{Name: "x", Hosts: 2, Flows: []netsim.Flow{{Src: 0, Dst: 1}}, Long: -1}, c.ctrl(), netsim.Config{DurationNs: 20_000})
			if err != nil && !strings.Contains(err.Error(), "fs_max_cwnd") {
				t.Errorf("%s %q: netsim refuses it: %v", c.flag, s, err)
			}
		}
		for _, dcqcn := range []bool{false, true} {
			e, err := simECN(s, dcqcn)
			switch {
			case err != nil:
				if !strings.HasPrefix(err.Error(), "--ecn ") || strings.Contains(err.Error(), "\n") {
					t.Errorf("simECN(%q): %v", s, err)
				}
			case e != nil:
				if _, err := netsim.Run(netsim.Scenario{Name: "x", Hosts: 2, Flows: []netsim.Flow{{Src: 0, Dst: 1}}, Long: -1}, netsim.FixedRate{Rate: 1}, netsim.Config{ECN: e, DurationNs: 1000}); err != nil {
					t.Errorf("simECN(%q) = %+v, which netsim refuses: %v", s, e, err)
				}
			}
		}
	})
}
