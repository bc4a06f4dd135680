package wcet_test

// Static WCET against measurement: C programs from fwsim/testdata/wcet, compiled at -O0, -O2
// and -Os, each run on many inputs. Every run must take at most the WCET's cycles; on
// straight-line and branch-only code the WCET must be within 10% of the slowest run, which
// the inputs are chosen to include (the worst path of every tree, every switch case, ...).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/nicsdk"
)

const wcetDir = "../testdata/wcet"

var wcetOpts = []string{"-O0", "-O2", "-Os"}

// buildWCET compiles src (relative paths are in fwsim/testdata/wcet) at opt with its link.ld
// (no start-up code: fwsim calls functions by name) and returns the ELF's bytes.
func buildWCET(tb testing.TB, src, opt string) []byte {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+opt+".elf")
	if !filepath.IsAbs(src) {
		src = filepath.Join(wcetDir, src)
	}
	if err := nicsdk.Build(out, filepath.Join(wcetDir, "link.ld"), []string{"-Wall", "-Werror", opt}, src); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// wcetArg is one argument: an integer, or bytes placed in the arena and passed by address.
type wcetArg struct {
	v   uint64
	mem []byte
}

type wcetInput []wcetArg

func ints(vs ...uint64) wcetInput {
	in := make(wcetInput, len(vs))
	for i, v := range vs {
		in[i].v = v
	}
	return in
}

func words32(vs []int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// runInput calls entry with in in fresh arena memory.
func runInput(tb testing.TB, m *fwsim.Machine, entry string, in wcetInput) fwsim.Result {
	tb.Helper()
	m.ResetAlloc()
	args := make([]uint64, len(in))
	for i, a := range in {
		if a.mem == nil {
			args[i] = a.v
			continue
		}
		p, err := m.Alloc(uint64(len(a.mem)), 16)
		if err != nil {
			tb.Fatal(err)
		}
		if err := m.WriteBytes(p, a.mem); err != nil {
			tb.Fatal(err)
		}
		args[i] = p
	}
	res, err := m.Call(entry, args...)
	if err != nil {
		tb.Fatalf("%s%v: %v", entry, args, err)
	}
	return res
}

// wcetEntry is one function of a test program and how to drive it.
type wcetEntry struct {
	name string
	// tight: straight-line or branch-only code, WCET/max measured must be <= 1.10.
	tight bool
	// loopBound, if non-zero, bounds every loop the analysis reports as unbounded.
	loopBound int
	// counted: at -O2 and -Os the analysis must bound every loop itself.
	counted bool
	// inputs returns the inputs to run; search, if set, runs after them with the machine, to
	// look for the worst path adaptively, and returns more inputs.
	inputs func(rng *rand.Rand) []wcetInput
	search func(tb testing.TB, m *fwsim.Machine) []wcetInput
}

type wcetProg struct {
	src     string
	entries []wcetEntry
}

func wcetPrograms() []wcetProg {
	u32s := func(rng *rand.Rand, n int, edges ...uint64) []wcetInput {
		var out []wcetInput
		for i := 0; i < 300; i++ {
			vs := make([]uint64, n)
			for j := range vs {
				if len(edges) > 0 && rng.IntN(3) == 0 {
					vs[j] = edges[rng.IntN(len(edges))]
				} else {
					vs[j] = uint64(rng.Uint32())
				}
			}
			out = append(out, ints(vs...))
		}
		return out
	}
	return []wcetProg{
		{src: "straight.c", entries: []wcetEntry{{
			name: "features", tight: true,
			inputs: func(rng *rand.Rand) []wcetInput {
				return u32s(rng, 3, 0, 1, 2, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff)
			},
		}}},
		{src: "calls.c", entries: []wcetEntry{{
			name: "update", tight: true,
			inputs: func(rng *rand.Rand) []wcetInput {
				var out []wcetInput
				rates := []uint64{0, 1, 1000, 1 << 19, 1 << 20, 1<<20 + 1, 0xffffffff}
				ys := []int64{-1 << 16, -40000, -1, 0, 1, 30000, 1 << 16}
				prevs := []uint64{0, 1, 5000, 1 << 18, 1 << 20, 1 << 21, 0xffffffff}
				for _, r := range rates {
					for _, y := range ys {
						for _, p := range prevs {
							out = append(out, ints(r, uint64(y), p))
						}
					}
				}
				for i := 0; i < 500; i++ {
					y := int64(rng.IntN(1<<17+1)) - 1<<16
					out = append(out, ints(uint64(rng.Uint32()>>rng.IntN(32)), uint64(y), uint64(rng.Uint32()>>rng.IntN(32))))
				}
				return out
			},
		}}},
		{src: "switch.c", entries: []wcetEntry{{
			name: "on_event", tight: true,
			inputs: func(rng *rand.Rand) []wcetInput {
				var out []wcetInput
				for k := uint64(0); k < 12; k++ {
					for _, x := range []uint64{0, 1, 2, 0xffff, 0xffffffff} {
						out = append(out, ints(k, uint64(rng.Uint32()), x), ints(k, x, uint64(rng.Uint32())))
					}
				}
				return append(out, u32s(rng, 3)...)
			},
		}}},
		{src: "trees.c", entries: []wcetEntry{{
			name: "ensemble", tight: true,
			inputs: func(rng *rand.Rand) []wcetInput {
				var out []wcetInput
				for i := 0; i < 300; i++ {
					x := make([]int32, treeFeatures)
					for j := range x {
						x[j] = int32(rng.IntN(2401)) - 1200
					}
					out = append(out, wcetInput{{mem: words32(x)}})
				}
				return out
			},
			search: searchTrees,
		}}},
		{src: "loop.c", entries: []wcetEntry{
			{
				name: "sum_window", loopBound: 9, // n <= 8: the head runs at most n+1 times
				inputs: func(rng *rand.Rand) []wcetInput {
					var out []wcetInput
					for n := 0; n <= 8; n++ {
						for i := 0; i < 20; i++ {
							h := make([]int32, 8)
							for j := range h {
								h[j] = int32(rng.Uint32())
							}
							out = append(out, wcetInput{{mem: words32(h)}, {v: uint64(n)}})
						}
					}
					return out
				},
			},
			{
				name: "popcount16", loopBound: 17,
				inputs: func(rng *rand.Rand) []wcetInput {
					return u32s(rng, 1, 0, 0xffffffff)
				},
			},
			{
				// The head runs 13 times at -O0 (the test i < 12 runs once more than the
				// body), 12 at -O2 and -Os where the analysis counts it: exact either way.
				name: "mix12", loopBound: 13, counted: true, tight: true,
				inputs: func(rng *rand.Rand) []wcetInput { return u32s(rng, 1, 0, 0xffffffff) },
			},
			{
				name: "isqrt", loopBound: 17, counted: true,
				inputs: func(rng *rand.Rand) []wcetInput {
					return u32s(rng, 1, 0, 1, 0xffff, 0xfffe0001, 0xffffffff)
				},
			},
			{
				name: "scale_all", loopBound: 9, // nflows <= 8, n <= 8
				inputs: func(rng *rand.Rand) []wcetInput {
					var out []wcetInput
					for nf := 0; nf <= 8; nf++ {
						for n := 0; n <= 8; n++ {
							f := make([]int32, 64)
							for j := range f {
								f[j] = int32(rng.Uint32())
							}
							out = append(out, wcetInput{{mem: words32(f)}, {v: uint64(nf)}, {v: uint64(n)}})
						}
					}
					return out
				},
			},
		}},
	}
}

// wcetWithBounds runs WCET, giving bound to every loop it reports as unbounded, one at a time.
func wcetWithBounds(tb testing.TB, im *fwsim.Image, entry string, p *fwsim.Profile, bound int) *wcet.Report {
	tb.Helper()
	opt := wcet.Options{LoopBounds: map[uint64]int{}}
	for {
		r, err := wcet.Bound(im, entry, p, opt)
		if err == nil {
			return r
		}
		var we *wcet.Error
		if bound == 0 || !errors.Is(err, wcet.ErrUnboundedLoop) || !errors.As(err, &we) {
			tb.Fatalf("WCET(%s): %v", entry, err)
		}
		if _, dup := opt.LoopBounds[we.PC]; dup {
			tb.Fatalf("WCET(%s): loop 0x%x still unbounded after a bound: %v", entry, we.PC, err)
		}
		opt.LoopBounds[we.PC] = bound
	}
}

// TestWCETSound checks measured <= WCET on every run of every test program, under every
// shipped profile, and tightness on branch-only code.
func TestWCETSound(t *testing.T) {
	for _, prog := range wcetPrograms() {
		for _, opt := range wcetOpts {
			t.Run(strings.TrimSuffix(prog.src, ".c")+opt, func(t *testing.T) {
				t.Parallel()
				im, err := fwsim.LoadELF(buildWCET(t, prog.src, opt))
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range fwsim.Profiles() {
					m, err := fwsim.NewMachine(im, p)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range prog.entries {
						bound := e.loopBound
						if e.counted && opt != "-O0" {
							bound = 0 // no help: the analysis must count the loops
						}
						r := wcetWithBounds(t, im, e.name, p, bound)
						for _, l := range r.Loops {
							if l.Counted != (bound == 0) {
								t.Errorf("%s: loop at %s+0x%x: counted %v, want %v", e.name, l.Func, l.Offset, l.Counted, bound == 0)
							}
						}
						rng := rand.New(rand.NewPCG(1, uint64(len(e.name))))
						inputs := e.inputs(rng)
						if e.search != nil {
							inputs = append(inputs, e.search(t, m)...)
						}
						var maxC, maxI uint64
						for _, in := range inputs {
							res := runInput(t, m, e.name, in)
							if res.Cycles > r.Cycles {
								t.Fatalf("%s %s: measured %d cycles > WCET %d on input %v", p.Name, e.name, res.Cycles, r.Cycles, in)
							}
							if res.Insns > r.Insns && res.Cycles == r.Cycles {
								t.Errorf("%s %s: a run at the WCET took %d instructions, the path %d", p.Name, e.name, res.Insns, r.Insns)
							}
							maxC, maxI = max(maxC, res.Cycles), max(maxI, res.Insns)
						}
						tight := float64(r.Cycles) / float64(maxC)
						if p.Name == fwsim.DefaultProfile {
							t.Logf("%-10s %-4s %-10s WCET %5d cycles (%4d insns on the path), max measured %5d (%4d insns) over %d runs: tightness %.3f",
								prog.src, opt, e.name, r.Cycles, r.Insns, maxC, maxI, len(inputs), tight)
						}
						if e.tight && tight > 1.10 {
							t.Errorf("%s %s: tightness %.3f > 1.10 (WCET %d, max measured %d)", p.Name, e.name, tight, r.Cycles, maxC)
						}
					}
				}
			})
		}
	}
}

// The tree ensemble of testdata/wcet/trees.c: treeCount trees of depth treeDepth as if/else,
// the shape nicc emits for a distilled policy. Tree t tests feature treeDepth*t+d at depth
// d, so every root-to-leaf path is feasible and the trees are independent: the slowest input
// is each tree's slowest path at once, which searchTrees finds.
const (
	treeCount    = 10
	treeDepth    = 4
	treeFeatures = treeCount * treeDepth
	treeInner    = 1<<treeDepth - 1
	treeLeaves   = 1 << treeDepth
)

type treeModel struct {
	thr  [treeCount][treeInner]int32 // heap order: node i has children 2i+1 (x < thr), 2i+2
	leaf [treeCount][treeLeaves]int32
	base int32
}

func genTrees() *treeModel {
	rng := rand.New(rand.NewPCG(2024, 4))
	tm := &treeModel{base: int32(rng.IntN(2001)) - 1000}
	for t := range tm.thr {
		for i := range tm.thr[t] {
			tm.thr[t][i] = int32(rng.IntN(2001)) - 1000
		}
		for i := range tm.leaf[t] {
			tm.leaf[t][i] = int32(rng.IntN(1001)) - 500
		}
	}
	return tm
}

// C prints the ensemble as C.
func (tm *treeModel) C() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, `/* Generated by genTrees in fwsim/wcet/wcet_test.go; rewrite with
   NICC_UPDATE_WCET=1 go test ./fwsim/wcet -run TestWCETTreesSource
   %d trees of depth %d as if/else, the shape nicc emits for a distilled policy. Tree t tests
   feature %d*t+d at depth d, so every root-to-leaf path is feasible and the trees are
   independent. */
#include <stdint.h>

int32_t ensemble(const int32_t *x)
{
	int64_t acc = %d;
`, treeCount, treeDepth, treeDepth, tm.base)
	var node func(t, i, d int)
	node = func(t, i, d int) {
		ind := strings.Repeat("\t", d+1)
		if d == treeDepth {
			fmt.Fprintf(&b, "%sacc += %d;\n", ind, tm.leaf[t][i-treeInner])
			return
		}
		fmt.Fprintf(&b, "%sif (x[%d] < %d) {\n", ind, treeDepth*t+d, tm.thr[t][i])
		node(t, 2*i+1, d+1)
		fmt.Fprintf(&b, "%s} else {\n", ind)
		node(t, 2*i+2, d+1)
		fmt.Fprintf(&b, "%s}\n", ind)
	}
	for t := 0; t < treeCount; t++ {
		fmt.Fprintf(&b, "\n\t/* tree %d */\n", t)
		node(t, 0, 0)
	}
	b.WriteString("\n\treturn (int32_t)((acc + 8) >> 4);\n}\n")
	return b.String()
}

// setPath writes into x the features that send tree t to leaf number leaf (0 is leftmost).
func (tm *treeModel) setPath(x []int32, t, leaf int) {
	i := 0
	for d := 0; d < treeDepth; d++ {
		right := leaf>>(treeDepth-1-d)&1 == 1
		if right {
			x[treeDepth*t+d] = tm.thr[t][i]
			i = 2*i + 2
		} else {
			x[treeDepth*t+d] = tm.thr[t][i] - 1
			i = 2*i + 1
		}
	}
}

func TestWCETTreesSource(t *testing.T) {
	path := filepath.Join(wcetDir, "trees.c")
	want := genTrees().C()
	if os.Getenv("NICC_UPDATE_WCET") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not what genTrees prints; rewrite it with NICC_UPDATE_WCET=1", path)
	}
}

// searchTrees finds the slowest input of the ensemble: each tree's slowest leaf, measured
// with the other trees on their leftmost path, then all of them at once.
func searchTrees(tb testing.TB, m *fwsim.Machine) []wcetInput {
	tm := genTrees()
	x := make([]int32, treeFeatures)
	for t := 0; t < treeCount; t++ {
		tm.setPath(x, t, 0)
	}
	var out []wcetInput
	worst := make([]int, treeCount)
	for t := 0; t < treeCount; t++ {
		var best uint64
		for leaf := 0; leaf < treeLeaves; leaf++ {
			y := append([]int32(nil), x...)
			tm.setPath(y, t, leaf)
			in := wcetInput{{mem: words32(y)}}
			out = append(out, in)
			if c := runInput(tb, m, "ensemble", in).Cycles; c > best {
				best, worst[t] = c, leaf
			}
		}
	}
	for t := 0; t < treeCount; t++ {
		tm.setPath(x, t, worst[t])
	}
	return append(out, wcetInput{{mem: words32(x)}})
}

// TestWCETTailCalls: tail calls through `tail` (auipc+jr) and `j` cost the callee and end
// the path; measured stays under the WCET and tight.
func TestWCETTailCalls(t *testing.T) {
	im, err := fwsim.LoadELF(buildWCET(t, "shapes.S", "-O2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range []string{"tailer", "maybe_trap"} {
		r, err := wcet.Bound(im, entry, nil, wcet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := fwsim.NewMachine(im, nil)
		if err != nil {
			t.Fatal(err)
		}
		var worst uint64
		for _, a := range []int64{-5, -1, 0, 1, 7} {
			if entry == "maybe_trap" && a == 0 {
				continue // calls never, which traps
			}
			res, err := m.Call(entry, uint64(a), 3)
			if err != nil {
				t.Fatalf("%s(%d): %v", entry, a, err)
			}
			if res.Cycles > r.Cycles {
				t.Fatalf("%s(%d): measured %d > WCET %d", entry, a, res.Cycles, r.Cycles)
			}
			worst = max(worst, res.Cycles)
		}
		if worst != r.Cycles {
			t.Errorf("%s: WCET %d, slowest run %d: want equal", entry, r.Cycles, worst)
		}
		t.Logf("%s: WCET %d cycles, functions %+v", entry, r.Cycles, r.Functions)
	}
	r, _ := wcet.Bound(im, "tailer", nil, wcet.Options{})
	if len(r.Functions) != 3 || r.Functions[0].Name != "tailer" || strings.Join(r.Functions[0].Calls, ",") != "negdiv,square" {
		t.Errorf("tailer: functions %+v, want tailer calling negdiv and square", r.Functions)
	}
}

// TestWCETRefuses: what the analysis cannot bound is an error naming the function and pc.
func TestWCETRefuses(t *testing.T) {
	shapes, err := fwsim.LoadELF(buildWCET(t, "shapes.S", "-O2"))
	if err != nil {
		t.Fatal(err)
	}
	addrOf := func(im *fwsim.Image, name string, off uint64) uint64 {
		a, _, ok := im.Symbol(name)
		if !ok {
			t.Fatalf("no symbol %s", name)
		}
		return a + off
	}
	cases := []struct {
		entry string
		want  error
		pc    uint64 // offset from the function, or ^0 for any
		text  string
	}{
		{"irreducible", wcet.ErrIrreducible, ^uint64(0), "irreducible"},
		{"never", wcet.ErrNoReturn, 0, "never"},
		{"badcode", wcet.ErrBadCode, 4, "badcode+0x4"},
		{"jump_arg", wcet.ErrIndirectJump, 0, "jump through a0"},
		{"joined", wcet.ErrUnboundedLoop, 8, "joined+0x8"},
		{"nosuch", fwsim.ErrNoSymbol, ^uint64(0), "nosuch"},
	}
	for _, c := range cases {
		_, err := wcet.Bound(shapes, c.entry, nil, wcet.Options{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.entry, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: error %q does not say %q", c.entry, err, c.text)
		}
		var we *wcet.Error
		if c.pc != ^uint64(0) {
			if !errors.As(err, &we) || we.PC != addrOf(shapes, c.entry, c.pc) {
				t.Errorf("%s: error %v: want a *WCETError at %s+0x%x", c.entry, err, c.entry, c.pc)
			}
		}
	}
	// joined with a bound is fine.
	head := addrOf(shapes, "joined", 8)
	if _, err := wcet.Bound(shapes, "joined", nil, wcet.Options{LoopBounds: map[uint64]int{head: 1000}}); err != nil {
		t.Errorf("joined with a bound: %v", err)
	}
	// A bound of 0, and a bound on an address that is no loop head.
	if _, err := wcet.Bound(shapes, "joined", nil, wcet.Options{LoopBounds: map[uint64]int{head: 0}}); !errors.Is(err, wcet.ErrUnboundedLoop) {
		t.Errorf("bound 0: got %v", err)
	}
	_, err = wcet.Bound(shapes, "joined", nil, wcet.Options{LoopBounds: map[uint64]int{head: 9, head + 2: 9}})
	if !errors.Is(err, wcet.ErrNoSuchLoop) || !strings.Contains(err.Error(), fmt.Sprintf("0x%x", head+2)) {
		t.Errorf("bound on a non-head: got %v", err)
	}

	for _, opt := range wcetOpts {
		refuse, err := fwsim.LoadELF(buildWCET(t, "refuse.c", opt))
		if err != nil {
			t.Fatal(err)
		}
		_, err = wcet.Bound(refuse, "depth", nil, wcet.Options{})
		var we *wcet.Error
		if !errors.Is(err, wcet.ErrRecursion) || !errors.As(err, &we) || we.Func != "depth" || !strings.Contains(err.Error(), "depth -> depth") {
			t.Errorf("%s depth: got %v, want recursion in depth", opt, err)
		}
		_, err = wcet.Bound(refuse, "indirect", nil, wcet.Options{})
		if !errors.Is(err, wcet.ErrIndirectJump) || !errors.As(err, &we) || we.Func != "indirect" {
			t.Errorf("%s indirect: got %v, want an indirect call in indirect", opt, err)
		}

		// A loop whose trip count comes from an argument, at every optimisation level: the
		// error names the function and the head, and that head takes a bound.
		loops, err := fwsim.LoadELF(buildWCET(t, "loop.c", opt))
		if err != nil {
			t.Fatal(err)
		}
		_, err = wcet.Bound(loops, "sum_window", nil, wcet.Options{})
		if !errors.Is(err, wcet.ErrUnboundedLoop) || !errors.As(err, &we) || we.Func != "sum_window" {
			t.Fatalf("%s sum_window: got %v, want an unbounded loop in sum_window", opt, err)
		}
		spec := fmt.Sprintf("sum_window+0x%x", we.PC-addrOf(loops, "sum_window", 0))
		if !strings.Contains(err.Error(), spec) {
			t.Errorf("%s: error %q does not name the head as %s", opt, err, spec)
		}
		h, err := wcet.ParseLoopHead(loops, spec)
		if err != nil || h != we.PC {
			t.Fatalf("ParseLoopHead(%q) = 0x%x, %v; want 0x%x", spec, h, err, we.PC)
		}
		r, err := wcet.Bound(loops, "sum_window", nil, wcet.Options{LoopBounds: map[uint64]int{h: 9}})
		if err != nil || len(r.Loops) != 1 || r.Loops[0].Head != h || r.Loops[0].Bound != 9 || r.Loops[0].Counted {
			t.Errorf("%s sum_window bounded: %+v, %v", opt, r, err)
		}
	}
}

func TestParseLoopHead(t *testing.T) {
	im, err := fwsim.LoadELF(buildWCET(t, "shapes.S", "-O2"))
	if err != nil {
		t.Fatal(err)
	}
	j, _, _ := im.Symbol("joined")
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{fmt.Sprintf("0x%x", j+8), j + 8},
		{fmt.Sprintf("%x", j+8), j + 8},
		{"joined+0x8", j + 8},
		{"joined+8", j + 8},
		{" joined + 8 ", j + 8},
		{"joined", j},
	} {
		got, err := wcet.ParseLoopHead(im, c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseLoopHead(%q) = 0x%x, %v; want 0x%x", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "nosuch+4", "joined+zz", "zzz"} {
		if _, err := wcet.ParseLoopHead(im, bad); err == nil {
			t.Errorf("ParseLoopHead(%q): no error", bad)
		}
	}
}

// TestWCETDecision: the benchmark's decision function (decide in
// fwsim/testdata/referee/decision.c: 10 trees of depth 4 over shared features, then the action
// map and the clamped rate update) stays under its WCET on random features and flow
// contexts. Its trees test the same features more than once, so some static paths are infeasible and random inputs need not reach the
// WCET: the tightness is logged, not asserted.
func TestWCETDecision(t *testing.T) {
	src, err := filepath.Abs("../testdata/referee/decision.c")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, opt := range wcetOpts {
		im, err := fwsim.LoadELF(buildWCET(t, src, opt))
		if err != nil {
			t.Fatal(err)
		}
		r, err := wcet.Bound(im, "decide", nil, wcet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := fwsim.NewMachine(im, nil)
		if err != nil {
			t.Fatal(err)
		}
		var worst uint64
		for i := 0; i < 3000; i++ {
			f := make([]int32, 8)
			for k := range f {
				switch rng.IntN(3) {
				case 0:
					f[k] = int32(rng.IntN(2001) - 1000)
				case 1:
					f[k] = int32(rng.IntN(1<<21) - 1<<20)
				default:
					f[k] = int32(rng.Uint32())
				}
			}
			ctx := make([]int32, 12)
			ctx[0] = int32(rng.IntN(1<<20) + 1)
			res := runInput(t, m, "decide", wcetInput{{mem: words32(f)}, {mem: words32(ctx)}})
			if res.Cycles > r.Cycles {
				t.Fatalf("%s: decide%v: measured %d > WCET %d", opt, f, res.Cycles, r.Cycles)
			}
			worst = max(worst, res.Cycles)
		}
		t.Logf("decide %-4s WCET %4d cycles (%d functions), max measured %4d over 3000 random inputs: tightness %.3f",
			opt, r.Cycles, len(r.Functions), worst, float64(r.Cycles)/float64(worst))
	}
}
