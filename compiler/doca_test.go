package compiler

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/trap"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/doca"
)

// docaXGB is the DOCA tests' tree compile, in one form (fit's choice among forms is the nicc
// target's, tested there).
var docaXGB = CompileOptions{Model: rlccXGB, SDK: doca.Target, Form: "walk", Vectors: 4000}

func docaReport(t *testing.T) (*artifact.CompileReport, string) {
	return compileOnce(t, "doca-xgb", docaXGB)
}

// TestCompileDOCA: --sdk doca writes the DOCA source beside the nicc target's files, the same
// triad passes over it with parameter changes among the events, and its entry is bounded. An
// LSTM's DOCA compile (state words in the DOCA context) is checked the same way by lab's
// TestSimDOCAEqualsFirmware, which runs it in the closed loop: the suite compiles it once.

// The int8 MLP and LSTM are held to the 10% of nicc_on_event's WCET; the tree
// ensemble, whose handler is a fifth of the MLP's, is not (its figure is in the report).
func TestCompileDOCA(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key      string
		opt      CompileOptions
		maxRatio float64
	}{
		{"doca-xgb", docaXGB, 0},
		// The networks' DOCA verify runs fewer events: each is a network through fwsim.
		{"doca-mlp", CompileOptions{Model: teacherNN, SDK: doca.Target, Vectors: 4000, Int8: &golden.Int8Options{Samples: 5000}}, 1.10},
	} {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			r, dir := compileOnce(t, tc.key, tc.opt)
			d := r.DOCA
			if d == nil {
				t.Fatal("no DOCA report")
			}
			if d.Mismatches != 0 || d.UBSan != "clean" || len(d.Compared) != 4 {
				t.Errorf("DOCA verify: %d mismatches, UBSan %q, compared %v", d.Mismatches, d.UBSan, d.Compared)
			}
			vectors := tc.opt.Vectors
			if vectors == 0 {
				vectors = testVectors
			}
			if d.Events < vectors || d.SetParams == 0 || d.Refused == 0 || d.Refused == d.SetParams || d.Decisions == 0 {
				t.Errorf("DOCA verify ran %d events, %d decisions, %d parameter changes of which %d refused", d.Events, d.Decisions, d.SetParams, d.Refused)
			}
			b := d.Budget
			if b == nil || b.Entry != nicsdk.DOCAEntryAlgo || b.WCETCycles == 0 || d.MaxCycles > b.WCETCycles {
				t.Fatalf("DOCA budget %+v, measured max %d", b, d.MaxCycles)
			}
			if d.HandlerWCETCycles != r.Budget.WCETCycles {
				t.Errorf("DOCA report's nicc_on_event WCET %d, the budget's %d", d.HandlerWCETCycles, r.Budget.WCETCycles)
			}
			if tc.maxRatio > 0 && d.WCETRatio > tc.maxRatio {
				t.Errorf("doca_pcc_dev_user_algo WCET %d is %.3f x nicc_on_event's %d, above %.2f", b.WCETCycles, d.WCETRatio, d.HandlerWCETCycles, tc.maxRatio)
			}
			for _, f := range []string{artifact.DOCASourceFile, artifact.DOCAReadmeFile, artifact.DOCAFirmwareFile, artifact.DOCAVectorsFile, nicsdk.DOCAHeaderName,
				nicsdk.DOCAShimHeaderName, nicsdk.DOCAShimSourceName, artifact.HandlerFile, artifact.FirmwareFile, "host/doca_driver", "host/doca_driver-ubsan"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			var text strings.Builder
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "doca_pcc_dev_user_algo in doca_pcc_rlcc.c") || !strings.Contains(text.String(), "nicc_on_event's") {
				t.Errorf("summary lacks the DOCA lines:\n%s", text.String())
			}
		})
	}
}

// TestDOCAReadme: the README lists every DOCA name the source uses with its page, and what
// could not be checked.
func TestDOCAReadme(t *testing.T) {
	t.Parallel()
	_, dir := docaReport(t)
	readme, err := os.ReadFile(filepath.Join(dir, artifact.DOCAReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, nicsdk.DOCAHeaderName))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(filepath.Join(dir, artifact.DOCASourceFile))
	if err != nil {
		t.Fatal(err)
	}
	shim, err := os.ReadFile(filepath.Join(dir, nicsdk.DOCAShimHeaderName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]byte{src, gen, shim} {
		for _, name := range docaIdents(string(s)) {
			if !strings.Contains(string(readme), name) {
				t.Errorf("%s uses %s, which the README's list lacks", artifact.DOCASourceFile, name)
			}
		}
	}
	if strings.Contains(string(readme), "%!") {
		t.Errorf("README has a formatting error:\n%s", readme)
	}
	for _, want := range []string{"## DOCA names used", "## Not checked without DOCA's SDK", "DPACC", "USER_PROGRAMMABLE_CC"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
}

// docaIdents are the DOCA identifiers (doca_*, DOCA_*) in C source s, outside comments.
func docaIdents(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i:], "*/")
			if j < 0 {
				return out
			}
			i += j + 2
		case strings.HasPrefix(strings.ToLower(s[i:]), "doca_") && (i == 0 || !isIdent(s[i-1])):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			if !slices.Contains(out, s[i:j]) {
				out = append(out, s[i:j])
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// docaMachine is a compile's DOCA ELF in fwsim after doca_pcc_dev_user_init, with memory for
// the calls' arguments.
type docaMachine struct {
	t                                                *testing.T
	m                                                *fwsim.Machine
	ctx, ev, attr, res, vals, mask, params, counters uint64
}

func newDOCAMachine(t *testing.T, dir string) *docaMachine {
	t.Helper()
	// Raw addresses, not target/doca's Firmware: these tests stop calls mid-way and pass
	// arguments the harness never would.
	m, _, err := target.Load(filepath.Join(dir, artifact.DOCAFirmwareFile), budget.DefaultCore)
	if err != nil {
		t.Fatal(err)
	}
	d := &docaMachine{t: t, m: m}
	for _, a := range []struct {
		dst         *uint64
		size, align uint64
	}{{&d.ctx, nicsdk.CtxBytes, 16}, {&d.ev, nicsdk.DOCAEventBytes, 8}, {&d.attr, 4, 4},
		{&d.res, nicsdk.DOCAResultsBytes, 8}, {&d.mask, 4, 4}, {&d.vals, 4 * nicsdk.DOCAParams, 8}} {
		if *a.dst, err = m.Alloc(a.size, a.align); err != nil {
			t.Fatal(err)
		}
	}
	var ok bool
	if d.params, _, ok = m.Image().Symbol(nicsdk.DOCAParamsTable); !ok {
		t.Fatal("no params table")
	}
	if d.counters, _, ok = m.Image().Symbol(nicsdk.DOCACountersTable); !ok {
		t.Fatal("no counters table")
	}
	if _, err := d.m.Call(nicsdk.DOCAEntryInit, d.mask); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *docaMachine) words(addr uint64, n int) []uint32 {
	d.t.Helper()
	b := make([]byte, 4*n)
	if err := d.m.ReadBytes(addr, b); err != nil {
		d.t.Fatal(err)
	}
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// set calls doca_pcc_dev_user_set_algo_params on port 0, slot 0 and returns its status.
func (d *docaMachine) set(base uint32, vals ...uint32) uint32 {
	d.t.Helper()
	if err := d.m.WriteBytes(d.vals, target.WordBytes(append(slices.Clone(vals), 0, 0, 0)[:3])); err != nil {
		d.t.Fatal(err)
	}
	r, err := d.m.Call(nicsdk.DOCAEntrySetParams, 0, nicsdk.DOCASlot, uint64(base), uint64(len(vals)), d.vals, d.params+4*uint64(base))
	if err != nil {
		d.t.Fatal(err)
	}
	return uint32(r.A0)
}

// flow runs a new flow through RTT events of the given RTTs on port 0 and returns its rates.
func (d *docaMachine) flow(rtts []uint32) []uint32 {
	d.t.Helper()
	if err := d.m.WriteBytes(d.ctx, make([]byte, nicsdk.CtxBytes)); err != nil {
		d.t.Fatal(err)
	}
	var rates []uint32
	ts := uint32(0xfff00000) // wraps during the flow
	for _, rtt := range rtts {
		ts += 20_000
		ev := nicsdk.DOCAEvent{Type: nicsdk.DOCAEvRTT, Timestamp: ts, ReqSend: ts - rtt}
		for _, w := range []struct {
			addr uint64
			b    []byte
		}{{d.ev, ev.Bytes()}, {d.attr, nicsdk.DOCAAttrBytes(nicsdk.DOCASlot, false)}, {d.res, make([]byte, nicsdk.DOCAResultsBytes)}} {
			if err := d.m.WriteBytes(w.addr, w.b); err != nil {
				d.t.Fatal(err)
			}
		}
		if _, err := d.m.Call(nicsdk.DOCAEntryAlgo, d.ctx, d.ev, d.attr, d.res); err != nil {
			d.t.Fatal(err)
		}
		res := d.words(d.res, 2)
		if res[1] != 1 {
			d.t.Fatalf("RTT event: rtt_req %d, want 1", res[1])
		}
		rates = append(rates, res[0])
	}
	return rates
}

// TestDOCASetTarget changes RL-CC's target through doca_pcc_dev_user_set_algo_params in the
// DOCA firmware and shows the decisions follow it: the same RTTs give the rates nicc's own
// handler gives with that target compiled in, not the default's. Out-of-range values are
// refused and leave every parameter as it was.
func TestDOCASetTarget(t *testing.T) {
	_, dir := docaReport(t)
	cp, err := OpenCompiled(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	pol := cp.c.Policy
	d := newDOCAMachine(t, dir)
	compiled := nicsdk.DefaultParams()
	if got := d.words(d.params, 3); !slices.Equal(got, []uint32{compiled.Target, compiled.Beta, compiled.Scale}) {
		t.Fatalf("parameters after init %v, want the compiled %d, %d, %d", got, compiled.Target, compiled.Beta, compiled.Scale)
	}
	// A flow through a rising then falling queue: 10 µs base, up to 3x inflation.
	var rtts []uint32
	for i := range 40 {
		rtts = append(rtts, 10_000+uint32(min(i, 40-i))*1_000)
	}
	golden := func(p nicsdk.Params) []uint32 {
		ctx := nicsdk.FlowCtx{}
		var rates []uint32
		for _, rtt := range rtts {
			rates = append(rates, nicsdk.OnEventEx(nicsdk.Event{Type: nicsdk.EvRTT, RTTNs: rtt}, &ctx, p, 0, nicsdk.OutY,
				func(x [4]int32, st []uint32) int32 { return pol.Call(x[:], st) }))
		}
		return rates
	}
	before := d.flow(rtts)
	if want := golden(compiled); !slices.Equal(before, want) {
		t.Fatalf("default target: rates %v, nicc's handler gives %v", before, want)
	}
	lower := compiled
	lower.Target = compiled.Target / 4 // 0.016: the policy sees more congestion for the same RTTs
	if s := d.set(nicsdk.DOCAParamTarget, lower.Target); s != nicsdk.DOCAStatusOK {
		t.Fatalf("setting target %d: status %d", lower.Target, s)
	}
	after := d.flow(rtts)
	if want := golden(lower); !slices.Equal(after, want) {
		t.Fatalf("target %d: rates %v, nicc's handler with it compiled in gives %v", lower.Target, after, want)
	}
	if slices.Equal(after, before) {
		t.Fatalf("target %d gives the default's rates %v", lower.Target, after)
	}
	sum := func(v []uint32) (s uint64) {
		for _, x := range v {
			s += uint64(x)
		}
		return s
	}
	if sum(after) >= sum(before) {
		t.Errorf("a lower target should slow the flow: rates sum %d, with the default %d", sum(after), sum(before))
	}
	want := []uint32{lower.Target, compiled.Beta, compiled.Scale}
	for _, bad := range []struct {
		name string
		base uint32
		vals []uint32
	}{
		{"target above 16.0", nicsdk.DOCAParamTarget, []uint32{1<<20 + 1}},
		{"target above the compiled observation range", nicsdk.DOCAParamTarget, []uint32{compiled.Target + 1<<8}},
		{"scale 0", nicsdk.DOCAParamScale, []uint32{0}},
		{"beta above 256", nicsdk.DOCAParamBeta, []uint32{1<<24 + 1}},
		{"a valid beta with an invalid scale", nicsdk.DOCAParamBeta, []uint32{compiled.Beta * 2, 1 << 25}},
		{"a parameter it does not have", nicsdk.DOCAParamScale, []uint32{compiled.Scale, 7}},
	} {
		if s := d.set(bad.base, bad.vals...); s != nicsdk.DOCAStatusFail {
			t.Errorf("%s (%v from %d): status %d, want refused", bad.name, bad.vals, bad.base, s)
		}
		if got := d.words(d.params, 4); !slices.Equal(got[:3], want) || got[3] != 0 {
			t.Fatalf("after refusing %s: parameters %v, want %v unchanged", bad.name, got, want)
		}
	}
	if again := d.flow(rtts); !slices.Equal(again, after) {
		t.Errorf("after the refused changes the rates are %v, before them %v", again, after)
	}
	cnt := d.words(d.counters, 2)
	if cnt[0] != uint32(3*len(rtts)) || cnt[1] == 0 || cnt[1] > cnt[0] {
		t.Errorf("counters: %d decisions (want %d), %d at a bound", cnt[0], 3*len(rtts), cnt[1])
	}
}

// TestDOCANeedsRLCC: the DOCA target is RL-CC's handler; a model compiled alone is refused.
func TestDOCANeedsRLCC(t *testing.T) {
	_, err := Compile(CompileOptions{Model: bcModel, Handler: artifact.HandlerNone, Ranges: bcRows, SDK: doca.Target, Vectors: 100, Out: t.TempDir()})
	var ce *budget.CheckError
	if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "RL-CC handler") {
		t.Fatalf("--sdk doca --handler none: %v", err)
	}
}

// TestDOCAFilesCleared: a compile without --sdk doca into a directory that holds an earlier
// DOCA compile's files, and a file of someone else's, leaves none of them: the directory
// holds exactly the files its manifest lists, and report.json. The earlier compile is a copy
// of docaReport's.
func TestDOCAFilesCleared(t *testing.T) {
	t.Parallel()
	_, doca := docaReport(t)
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.CopyFS(dir, os.DirFS(doca)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, artifact.DOCASourceFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "host", "notes.txt"), []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Compile(CompileOptions{Model: rlccXGB, Form: "walk", Vectors: 200, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.DOCA != nil {
		t.Error("a compile without --sdk doca has a DOCA report")
	}
	for _, n := range []string{artifact.DOCASourceFile, artifact.DOCAFirmwareFile, artifact.DOCAReadmeFile, artifact.DOCAVectorsFile, nicsdk.DOCAHeaderName,
		nicsdk.DOCAShimHeaderName, nicsdk.DOCAShimSourceName, "host/doca_driver.c", "host/doca_driver"} {
		if _, err := os.Stat(filepath.Join(dir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a compile without --sdk doca: %v", n, err)
		}
	}
	want := map[string]bool{artifact.ReportFile: true}
	for _, f := range r.Manifest.Files {
		want[f.Path] = true
	}
	for p, st := range testutil.DirState(t, dir) {
		if !strings.HasPrefix(st, "d") && !want[filepath.ToSlash(p)] {
			t.Errorf("%s is left from before: the manifest does not list it", p)
		}
	}
}

// docaStageInput is the DOCA stage's input on a copy of docaReport's compile directory, read
// back as the compile made it, with vectors events and tamper editing the sources it emits.
func docaStageInput(t *testing.T, vectors int, tamper func(dir string) error) docaInput {
	t.Helper()
	_, shared := docaReport(t)
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.CopyFS(dir, os.DirFS(shared)); err != nil {
		t.Fatal(err)
	}
	cp, err := OpenCompiled(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	// What the nicc target's emit wrote: the C the copy holds, as the compile checked it.
	expect := map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".c") && !strings.HasSuffix(p, ".h")) {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err == nil {
			expect[rel], err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r := cp.Report
	return docaInput{ctx: context.Background(), dir: dir, out: dir, policy: cp.Policy(), params: cp.Params(), hostCC: "gcc", expect: expect,
		opt: r.Build.Opt, core: r.Budget.Core.Name, vectors: vectors, seed: docaXGB.Seed, handlerWCET: r.Budget.WCETCycles, tamper: tamper}
}

// TestDOCAVerifyCatches: a DOCA runtime that counts each decision twice, or one whose
// doca_pcc_dev_user_set_algo_params leaves the port's precomputed terms as they were (its
// decisions keep the old parameters), differs from its Go twin, and verify says so. One that
// accepts a port the device does not have writes past its tables: verify fails on it too
// (the host build crashes or reports it before the outputs are compared). Each runs the DOCA
// stage alone on a copy of a compile; the first runs the whole compile too, and its report
// and readers are checked.
func TestDOCAVerifyCatches(t *testing.T) {
	t.Parallel()
	for i, c := range []struct {
		name, old, new string
		differs        bool // the failure is a mismatch with the Go twin
	}{
		{"terms not updated", "rlcc_doca_terms[spare] =", "(void)", true},
		{"decisions counted twice", "counter[RLCC_DOCA_COUNTER_DECISIONS]++;", "counter[RLCC_DOCA_COUNTER_DECISIONS] += 2;", true},
		{"a port beyond the device's accepted", "port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS ||", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tamper := tamperFirst(t, nicsdk.DOCAHeaderName, regexp.MustCompile(regexp.QuoteMeta(c.old)), func([]string) string { return c.new })
			out, err := runDOCA(docaStageInput(t, 500, tamper))
			var ce *budget.CheckError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "verify (DOCA)") {
				t.Fatalf("%s: %v", c.name, err)
			}
			t.Logf("%s: %v", c.name, err)
			if out.report == nil || (c.differs && out.report.Mismatches == 0) {
				t.Fatalf("%s: the stage's report: %+v", c.name, out.report)
			}
			if i > 0 {
				return
			}
			opt := CompileOptions{Model: rlccXGB, SDK: doca.Target, Form: "walk", Vectors: 500, Out: t.TempDir(), docaTamper: tamper}
			r, err := Compile(opt)
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "verify (DOCA)") {
				t.Fatalf("%s: compile: %v", c.name, err)
			}
			if r == nil || r.Failure == nil || r.Failure.Stage != "doca" || r.DOCA == nil || (c.differs && r.DOCA.Mismatches == 0) {
				t.Fatalf("%s: report of the failed compile: %+v", c.name, r)
			}
			// Its DOCA program failed verification: no reader runs it; its nicc firmware passed.
			_, err = artifact.ReadReport(opt.Out, artifact.DOCAFirmwareFile) // what sim --sdk doca reads it with
			want := filepath.Join(opt.Out, artifact.DOCAFirmwareFile) + ": the compile's doca stage did not pass (fail), so it is not verified; compile again"
			if err == nil || err.Error() != want {
				t.Errorf("%s: sim --sdk doca: %v; want %q", c.name, err, want)
			}
			if _, err := OpenCompiled(opt.Out, ""); err != nil {
				t.Errorf("%s: the nicc firmware: %v", c.name, err)
			}
		})
	}
}

// TestDOCASourcesChecked: a preprocessor directive nicc did not write, added to the DOCA
// source after it was emitted, is refused before anything is built from it: the DOCA stage
// on a copy of a compile whose DOCA firmware is removed.
func TestDOCASourcesChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, prefix, suffix, want string
		built                      bool // the ELF is built, and its symbols refused
	}{
		{"a foreign directive", "#include \"/etc/passwd\"\n", "", "is not one nicc wrote", false},
		{"a foreign global function", "", "\nint nicc_exfiltrate(void) { return 7; }\n",
			"symbol nicc_exfiltrate is global, and nicc's only global symbols are its entry points and its own library's", true},
		{"a foreign local function", "", "\n__attribute__((used)) static int nicc_spare(void) { return 7; }\n",
			"symbol nicc_spare is defined, and no code nicc wrote names it", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := docaStageInput(t, 2000, func(dir string) error {
				p := filepath.Join(dir, artifact.DOCASourceFile)
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				return os.WriteFile(p, slices.Concat([]byte(c.prefix), b, []byte(c.suffix)), 0o644)
			})
			elf := filepath.Join(in.dir, artifact.DOCAFirmwareFile)
			if err := os.Remove(elf); err != nil {
				t.Fatal(err)
			}
			out, err := runDOCA(in)
			var ce *budget.CheckError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s: %v", c.name, err)
			}
			if _, err := os.Stat(elf); c.built != (err == nil) {
				t.Errorf("%s built from the tampered source: %v, want %v", artifact.DOCAFirmwareFile, err == nil, c.built)
			}
			if out.report != nil {
				t.Errorf("the tampered source was verified: %+v", out.report)
			}
		})
	}
}

// TestDOCATermsNeverTorn: doca_pcc_dev_user_set_algo_params stopped after each of its
// instructions in fwsim, as a decision on another DPA thread could find it, then a decision
// on the memory it left. Each such decision is the decision under the old parameters or the
// one under the new, never a mix of their terms; the first stops give the old, and the new
// appears only once the call has written the whole copy.
func TestDOCATermsNeverTorn(t *testing.T) {
	_, dir := docaReport(t)
	d := newDOCAMachine(t, dir)
	p := nicsdk.DefaultParams()
	// Every parameter changes, so a decision on a mix of old and new terms has an
	// observation of its own: the flow's RTT inflation 4 is above both betas.
	vals := []uint32{p.Target / 2, 2 * p.Beta, p.Scale / 2}
	ctx := nicsdk.FlowCtx{1 << 19, 10_000, nicsdk.Q16One, nicsdk.Q16One, 0, nicsdk.FlagInit}
	ev := nicsdk.DOCAEvent{Type: nicsdk.DOCAEvRTT, Timestamp: 1_000_000, ReqSend: 1_000_000 - 40_000}
	fresh := func() {
		d.m.Reset()
		if _, err := d.m.Call(nicsdk.DOCAEntryInit, d.mask); err != nil {
			t.Fatal(err)
		}
	}
	set := func(limit uint64) (fwsim.Result, error) {
		if err := d.m.WriteBytes(d.vals, target.WordBytes(vals)); err != nil {
			t.Fatal(err)
		}
		d.m.StepLimit = limit
		defer func() { d.m.StepLimit = fwsim.DefaultStepLimit }()
		return d.m.Call(nicsdk.DOCAEntrySetParams, 0, nicsdk.DOCASlot, nicsdk.DOCAParamTarget, uint64(len(vals)), d.vals, d.params)
	}
	// decide is the decision's rate and the flow's context after it.
	decide := func() []uint32 {
		for _, w := range []struct {
			addr uint64
			b    []byte
		}{{d.ctx, ctx.Bytes()}, {d.ev, ev.Bytes()}, {d.attr, nicsdk.DOCAAttrBytes(nicsdk.DOCASlot, false)}, {d.res, make([]byte, nicsdk.DOCAResultsBytes)}} {
			if err := d.m.WriteBytes(w.addr, w.b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.m.Call(nicsdk.DOCAEntryAlgo, d.ctx, d.ev, d.attr, d.res); err != nil {
			t.Fatal(err)
		}
		return append(d.words(d.res, 1), d.words(d.ctx, nicsdk.CtxWords)...)
	}
	fresh()
	old := decide()
	fresh()
	full, err := set(fwsim.DefaultStepLimit)
	if err != nil || full.A0 != nicsdk.DOCAStatusOK {
		t.Fatalf("set_algo_params %v: status %d, %v", vals, full.A0, err)
	}
	updated := decide()
	if slices.Equal(old, updated) {
		t.Fatalf("the new parameters decide as the old: %v", old)
	}
	firstNew := -1
	for k := range full.Insns {
		fresh()
		if _, err := set(k); !errors.Is(err, trap.ErrStepLimit) {
			t.Fatalf("set_algo_params stopped after %d of %d instructions: %v", k, full.Insns, err)
		}
		switch got := decide(); {
		case slices.Equal(got, old):
			if firstNew >= 0 {
				t.Fatalf("stopped after %d instructions the decision is the old parameters' again (new from %d)", k, firstNew)
			}
		case slices.Equal(got, updated):
			if firstNew < 0 {
				firstNew = int(k)
			}
		default:
			t.Fatalf("stopped after %d of %d instructions: the decision %v is neither the old parameters' %v nor the new ones' %v",
				k, full.Insns, got, old, updated)
		}
	}
	if firstNew < 0 {
		t.Errorf("no stop of set_algo_params (%d instructions) publishes the new parameters", full.Insns)
	}
}
