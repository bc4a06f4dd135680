package codegen_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/lightgbm"
	"github.com/nicc-dev/nicc/model/xgboost"
	"github.com/nicc-dev/nicc/quantize"
)

// Snapshots of the generated C live in testdata/codegen/<case>/; NICC_UPDATE_SNAPSHOTS=1
// rewrites them (and deletes those no test uses).
var snapshots = &testutil.Snapshots{Dir: "../testdata/codegen"}

func snapshot(t *testing.T, rel string, got []byte) { t.Helper(); snapshots.Check(t, rel, got) }

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	// Only a full run knows every snapshot a test uses.
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		if err := snapshots.Unused(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// A case is an IR and the options it is printed with.
type genCase struct {
	name string
	ir   *quantize.TreeIR
	opt  codegen.Options
}

var (
	casesOnce sync.Once
	casesVal  []genCase
	casesErr  error
)

// cases are the snapshot, compile and bit-exactness cases, built once.
func cases(t *testing.T) []genCase {
	t.Helper()
	casesOnce.Do(func() { casesVal, casesErr = buildCases() })
	if casesErr != nil {
		t.Fatal(casesErr)
	}
	return casesVal
}

func buildCases() ([]genCase, error) {
	xgb, err := model.LoadWith("../testdata/models/rlcc_xgb.json", xgboost.Parse)
	if err != nil {
		return nil, err
	}
	rlcc, err := quantize.Trees(xgb, rlccQ16(xgb.Inputs), quantize.TreeOptions{})
	if err != nil {
		return nil, err
	}
	lgb, err := model.LoadWith("../testdata/lightgbm/lg_dart_breast_cancer.model", lightgbm.Parse)
	if err != nil {
		return nil, err
	}
	lo, hi, err := tsvRanges("../testdata/lightgbm/breast_cancer_test.tsv")
	if err != nil {
		return nil, err
	}
	ins, err := quantize.ChooseInputs(lgb.Inputs, lo, hi)
	if err != nil {
		return nil, err
	}
	bc, err := quantize.Trees(lgb, ins, quantize.TreeOptions{})
	if err != nil {
		return nil, err
	}
	obl, err := quantize.Trees(obliviousModel(), []quantize.Input{
		{Name: "a", Frac: 8, Min: -512, Max: 512}, {Name: "b", Frac: 8, Min: -512, Max: 512}, {Name: "c", Frac: 12, Min: 0, Max: 4096},
	}, quantize.TreeOptions{})
	if err != nil {
		return nil, err
	}
	wide, err := quantize.Trees(wideModel(), []quantize.Input{
		{Name: "big", Frac: 0, Min: math.MinInt32, Max: math.MaxInt32}, {Name: "q16", Frac: 16, Min: -65536, Max: 65536},
	}, quantize.TreeOptions{Clamp: true, ClampMin: -256 << 16, ClampMax: 256 << 16})
	if err != nil {
		return nil, err
	}
	// The rank form: the full int32 range, clamped, a group per tree; the oblivious trees
	// in two groups, buckets of several thresholds (the larger rank forms: rank_test.go).
	wideRank, err := rankOptions(wide, nil, []int{31, 16}, codegen.Options{Func: "wide"})
	if err != nil {
		return nil, err
	}
	oblRank, err := rankOptions(obl, nil, []int{6, 6, 10}, codegen.Options{Func: "obl"})
	if err != nil {
		return nil, err
	}
	cs := []genCase{{"wide_rank", wide, wideRank}, {"oblivious_rank", obl, oblRank}}
	return append(cs, []genCase{
		{"rlcc_xgb", rlcc, codegen.Options{}},
		{"breast_cancer", bc, codegen.Options{Func: "breast_cancer"}},
		{"oblivious_table", obl, codegen.Options{Func: "obl", Form: codegen.FormTable}},
		{"oblivious_branch", obl, codegen.Options{Func: "obl"}},
		{"wide_clamp", wide, codegen.Options{Func: "wide"}},
		{"oblivious_inline", obl, codegen.Options{Func: "obl", Inline: true}},
		{"rlcc_xgb_walk", rlcc, codegen.Options{Form: codegen.FormWalk}},
		{"oblivious_walk", obl, codegen.Options{Func: "obl", Form: codegen.FormWalk}},
	}...), nil
}

// rankOptions are opt with the rank form of ir as groups (nil: a group per tree) and
// shift lay it out.
func rankOptions(ir *quantize.TreeIR, groups [][]int, shift []int, opt codegen.Options) (codegen.Options, error) {
	if groups == nil {
		for t := range ir.Trees {
			groups = append(groups, []int{t})
		}
	}
	l, err := ir.BuildRank(quantize.RankPlan{Groups: groups, Shift: shift})
	opt.Form, opt.Rank = codegen.FormRank, l
	return opt, err
}

// rlccQ16 are the RL-CC handler's feature formats: Q16, actions on [0.8, 1.2], observations
// on [−0.768, 76.8].
func rlccQ16(names []string) []quantize.Input {
	q := func(v float64) int32 { return int32(math.Round(v * 65536)) }
	ins := make([]quantize.Input, 4)
	for i, name := range names {
		lo, hi := 0.8, 1.2
		if i%2 == 1 {
			lo, hi = -0.768, 76.8
		}
		ins[i] = quantize.Input{Name: name, Frac: 16, Min: q(lo), Max: q(hi)}
	}
	return ins
}

func tsvRanges(path string) (lo, hi []float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for i, s := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, nil, err
			}
			if i == len(lo) {
				lo, hi = append(lo, v), append(hi, v)
			}
			lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
		}
	}
	return lo, hi, sc.Err()
}

// obliviousModel has two CatBoost-style oblivious trees (x > t goes left) and one that is not.
func obliviousModel() *model.Model {
	oblivious := func(levels []model.Node, leaves []float64) model.Tree {
		var ns []model.Node
		for d, lv := range levels {
			for k := 0; k < 1<<d; k++ {
				n := lv
				i := len(ns)
				n.Left, n.Right = 2*i+1, 2*i+2
				ns = append(ns, n)
			}
		}
		for _, v := range leaves {
			ns = append(ns, model.Node{Leaf: true, Value: v})
		}
		return model.Tree{Nodes: ns}
	}
	gt := func(f int, th float64) model.Node { return model.Node{Feature: f, Threshold: th, Cmp: model.CmpGT} }
	return &model.Model{Version: model.NativeVersion, Name: "oblivious", Inputs: []string{"a", "b", "c"},
		Ensemble: &model.Ensemble{Base: -0.125, Trees: []model.Tree{
			oblivious([]model.Node{gt(0, 0.3), gt(1, -0.25), gt(2, 0.5)}, []float64{0.5, -0.25, 0.125, 1, -1, 0.75, 0.03125, -0.5}),
			oblivious([]model.Node{gt(2, 0.9), gt(0, -1.5)}, []float64{0.01, -0.02, 0.03, -0.04}),
			{Nodes: []model.Node{
				{Feature: 1, Threshold: 0.1, Cmp: model.CmpLE, Left: 1, Right: 2},
				{Leaf: true, Value: 0.2},
				{Feature: 0, Threshold: 0.7, Cmp: model.CmpLT, Left: 3, Right: 4},
				{Leaf: true, Value: -0.3}, {Leaf: true, Value: 0.4},
			}},
		}}}
}

// wideModel needs a 64-bit accumulator and a clamp, has a threshold at INT32_MIN, and a
// tree that folds into the base.
func wideModel() *model.Model {
	return &model.Model{Version: model.NativeVersion, Name: "wide", Inputs: []string{"big", "q16"},
		Ensemble: &model.Ensemble{Base: 3, Trees: []model.Tree{
			{Nodes: []model.Node{
				{Feature: 0, Threshold: -2147483647.5, Cmp: model.CmpLE, Left: 1, Right: 2},
				{Leaf: true, Value: -300},
				{Feature: 1, Threshold: 0, Cmp: model.CmpLT, Left: 3, Right: 4},
				{Leaf: true, Value: 250.5}, {Leaf: true, Value: -0.75},
			}},
			{Nodes: []model.Node{
				{Feature: 0, Threshold: 1e9, Cmp: model.CmpLT, Left: 1, Right: 2},
				{Leaf: true, Value: 0.5}, {Leaf: true, Value: 200},
			}},
			// q16 is in [−1, 1]: this tree is constant and joins the base.
			{Nodes: []model.Node{
				{Feature: 1, Threshold: 3, Cmp: model.CmpLT, Left: 1, Right: 2},
				{Leaf: true, Value: 1.25}, {Leaf: true, Value: -7},
			}},
		}}}
}

func TestSnapshots(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			f, err := codegen.Trees(c.ir, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			snapshot(t, c.name+"/"+f.HeaderName, f.Header)
			snapshot(t, c.name+"/"+f.SourceName, f.Source)
		})
	}
}

// TestDeterministic: the same model quantized and printed twice gives the same bytes.
func TestDeterministic(t *testing.T) {
	cs := cases(t)
	again, err := buildCases()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		a, err := codegen.Trees(c.ir, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := codegen.Trees(again[i].ir, again[i].opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Header, b.Header) || !bytes.Equal(a.Source, b.Source) {
			t.Errorf("%s: two runs differ", c.name)
		}
	}
}

var (
	commentRE   = regexp.MustCompile(`(?s)/\*.*?\*/`)
	forbiddenRE = regexp.MustCompile(`\b(float|double|for|while|do|goto|switch|malloc|calloc|realloc|free|alloca|long)\b|math\.h|\d\.\d|\d[eE][+-]?\d`)
	callRE      = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`)
	preprocRE   = regexp.MustCompile(`(?m)^#.*$`)
)

// TestFreestanding: no floats, libm, heap, loops or calls (hence no recursion) in the C.
func TestFreestanding(t *testing.T) {
	for _, c := range cases(t) {
		f, err := codegen.Trees(c.ir, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range [][]byte{f.Header, f.Source} {
			code := commentRE.ReplaceAllString(string(file), "")
			code = preprocRE.ReplaceAllString(code, "")
			if m := forbiddenRE.FindString(code); m != "" {
				t.Errorf("%s: %q in the generated C", c.name, m)
			}
			for _, m := range callRE.FindAllStringSubmatch(code, -1) {
				switch {
				case m[1] == "if", m[1] == "return", m[1] == "INT64_C", m[1] == "UINT64_C", m[1] == c.opt.Func, m[1] == codegen.DefaultFunc:
				case c.opt.Inline && m[1] == c.opt.Func+"_inline": // the wrapper's call, always inlined
				default:
					t.Errorf("%s: %s( in the generated C", c.name, m[1])
				}
			}
		}
	}
}

func TestBadOptions(t *testing.T) {
	ir := cases(t)[0].ir
	for _, o := range []codegen.Options{{Func: "1abc"}, {Func: "a-b"}, {Func: "_x"}, {Form: 7}} {
		if _, err := codegen.Trees(ir, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := codegen.Trees(nil, codegen.Options{}); err == nil {
		t.Error("nil IR: no error")
	}
}

// strictFlags are the warning flags the generated C must pass.
var strictFlags = testutil.StrictFlags

// The linker script firmware builds use (nothing but code and data at fixed addresses).
const linkScript = "../fwsim/testdata/wcet/link.ld"

// built is a case's C compiled for the host (a driver) and for the engine (an ELF).
type built struct {
	files  *codegen.Files
	driver string
	elf    string
}

func build(t *testing.T, c genCase) *built {
	t.Helper()
	f, err := codegen.Trees(c.ir, c.opt)
	if err != nil {
		t.Fatal(err)
	}
	driver, elf := buildFiles(t, f)
	return &built{files: f, driver: driver, elf: elf}
}

// vectors are at least n raw input vectors: for every input and every edge value (range ends,
// each threshold T−1, T, T+1) a vector holding it, all-min and all-max, then random vectors
// whose features are edge values or uniform in range with equal odds.
func vectors(ir *quantize.TreeIR, n int, seed uint64) [][]int32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	edges := make([][]int32, len(ir.Inputs))
	for i := range ir.Inputs {
		edges[i] = ir.EdgeValues(i)
	}
	random := func() []int32 {
		x := make([]int32, len(ir.Inputs))
		for i, in := range ir.Inputs {
			if rng.IntN(2) == 0 {
				x[i] = edges[i][rng.IntN(len(edges[i]))]
			} else {
				x[i] = int32(int64(in.Min) + rng.Int64N(int64(in.Max)-int64(in.Min)+1))
			}
		}
		return x
	}
	var vs [][]int32
	lo, hi := make([]int32, len(ir.Inputs)), make([]int32, len(ir.Inputs))
	for i, in := range ir.Inputs {
		lo[i], hi[i] = in.Min, in.Max
	}
	vs = append(vs, lo, hi)
	for i := range ir.Inputs {
		for _, v := range edges[i] {
			x := random()
			x[i] = v
			vs = append(vs, x)
		}
	}
	for len(vs) < n {
		vs = append(vs, random())
	}
	return vs
}

// TestBitExact: golden Eval == host-compiled C == fwsim running the RISC-V ELF, on ≥ 10k
// vectors per case, and fwsim's measured cycles stay within the static WCET.
func TestBitExact(t *testing.T) {
	prof, err := fwsim.LookupProfile("dpa")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := build(t, c)
			fn := strings.TrimSuffix(b.files.SourceName, ".c")
			vs := vectors(c.ir, 10000, 1)

			bound, maxCycles, size := agreeThreeWay(t, b.driver, b.elf, fn, len(c.ir.Inputs), vs, c.ir.Eval)
			t.Logf("%s: %d vectors bit-exact; dpa: WCET %d cycles (%d insns), max measured %d, code %d bytes; %s",
				c.name, len(vs), bound.Cycles, bound.Insns, maxCycles, size, lowerBound(c.ir, prof, bound.Cycles))
		})
	}
}

// lowerBound is the lower bound for the trees: one compare-and-branch per level of
// every tree (a taken branch: at each split one way or the other must jump) plus one add per
// tree, with the profile's costs.
func lowerBound(ir *quantize.TreeIR, p *fwsim.Profile, bound uint64) string {
	var lb uint64
	for _, tr := range ir.Trees {
		lb += uint64(tr.Depth)*uint64(p.Costs.BranchTaken) + uint64(p.Costs.ALU)
	}
	return fmt.Sprintf("lower bound %d (%d trees: depth × branch_taken %d + alu %d), WCET/bound %.2f",
		lb, len(ir.Trees), p.Costs.BranchTaken, p.Costs.ALU, float64(bound)/float64(lb))
}

// agreeThreeWay runs vs through golden, the host driver (int32 vectors on stdin, int32 results
// on stdout) and the ELF's fn in fwsim on dpa, fails on the first disagreement, and checks
// every measured cycle count against the static WCET. It returns the WCET, the most cycles
// measured and fn's code size.
func agreeThreeWay(t *testing.T, driver, elfPath, fn string, nIn int, vs [][]int32, golden func([]int32) int32) (*wcet.Report, uint64, uint64) {
	t.Helper()
	var in bytes.Buffer
	for _, x := range vs {
		binary.Write(&in, binary.LittleEndian, x)
	}
	cmd := exec.Command(driver)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	if len(out) != 4*len(vs) {
		t.Fatalf("driver wrote %d bytes for %d vectors", len(out), len(vs))
	}
	im, prof, m := dpaMachine(t, elfPath)
	addr, err := m.Alloc(uint64(4*nIn), 16)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := wcet.Bound(im, fn, prof, wcet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4*nIn)
	var maxCycles uint64
	for k, x := range vs {
		want := golden(x)
		host := int32(binary.LittleEndian.Uint32(out[4*k:]))
		for i, v := range x {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
		}
		if err := m.WriteBytes(addr, buf); err != nil {
			t.Fatal(err)
		}
		res, err := m.Call(fn, addr)
		if err != nil {
			t.Fatalf("vector %d %v: fwsim: %v", k, x, err)
		}
		sim := int32(res.A0)
		if int64(res.A0) != int64(sim) {
			t.Fatalf("vector %d %v: a0 = %#x is not a sign-extended int32", k, x, res.A0)
		}
		if host != want || sim != want {
			t.Fatalf("vector %d %v: golden %d, host C %d, fwsim %d", k, x, want, host, sim)
		}
		maxCycles = max(maxCycles, res.Cycles)
	}
	if maxCycles > bound.Cycles {
		t.Errorf("measured %d cycles > WCET %d", maxCycles, bound.Cycles)
	}
	_, size, _ := im.Symbol(fn)
	return bound, maxCycles, size
}

// dpaMachine loads the ELF at path into an emulator on the dpa profile.
func dpaMachine(t testing.TB, path string) (*fwsim.Image, *fwsim.Profile, *fwsim.Machine) {
	return testutil.DPAMachine(t, path)
}
