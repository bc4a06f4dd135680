package quantize_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/lightgbm"
	"github.com/nicc-dev/nicc/model/xgboost"
	"github.com/nicc-dev/nicc/quantize"
)

// shipped is a model from testdata with the input formats it is compiled with.
type shipped struct {
	name   string
	m      *model.Model
	inputs []quantize.Input
}

// rlccQ16 are the RL-CC handler's feature formats: Q16, actions on [0.8, 1.2], observations
// on [−0.768, 76.8] (docs/ARCHITECTURE.md: the published network's distillation ranges).
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

func load(t testing.TB, path string, parse func([]byte) (*model.Model, error)) *model.Model {
	t.Helper()
	m, err := model.LoadWith(path, parse)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tsvRanges is each column's [min, max] over a tab-separated file of numbers.
func tsvRanges(t testing.TB, path string) (lo, hi []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for i, s := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			if i == len(lo) {
				lo, hi = append(lo, v), append(hi, v)
			}
			lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
		}
	}
	return lo, hi
}

func shippedModels(t testing.TB) []shipped {
	t.Helper()
	xgb := load(t, "../testdata/models/rlcc_xgb.json", xgboost.Parse)
	choose := func(m *model.Model, lo, hi []float64) []quantize.Input {
		ins, err := quantize.ChooseInputs(m.Inputs, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		return ins
	}
	alo, ahi := []float64{0.8, -0.768, 0.8, -0.768}, []float64{1.2, 76.8, 1.2, 76.8}
	lgb := load(t, "../testdata/lightgbm/lg_dart_breast_cancer.model", lightgbm.Parse)
	blo, bhi := tsvRanges(t, "../testdata/lightgbm/breast_cancer_test.tsv")
	return []shipped{
		{"rlcc_xgb/q16", xgb, rlccQ16(xgb.Inputs)},
		{"rlcc_xgb/chosen", xgb, choose(xgb, alo, ahi)},
		{"xgb_logistic", load(t, "../testdata/models/xgb_logistic.json", xgboost.Parse), nil},
		{"xgb_dart", load(t, "../testdata/models/xgb_dart.json", xgboost.Parse), nil},
		{"lg_dart_breast_cancer", lgb, choose(lgb, blo, bhi)},
	}
}

func (s *shipped) formats(t testing.TB) []quantize.Input {
	if s.inputs == nil {
		s.inputs = rlccQ16(s.m.Inputs)
	}
	return s.inputs
}

// low is the float split's decision at raw r, normalised so true means "raw <= T".
func low(n *model.Node, in quantize.Input, r int64, f32 bool) bool {
	return n.GoesLeft(math.Ldexp(float64(r), -in.Frac), f32) != (n.Cmp == model.CmpGT)
}

// TestSplitsExact checks every split of the shipped models at T−1, T, T+1, T+2 and at the
// ends of the raw range, against the float split.
func TestSplitsExact(t *testing.T) {
	for _, s := range shippedModels(t) {
		t.Run(s.name, func(t *testing.T) {
			e := s.m.Ensemble
			ins := s.formats(t)
			splits, folded := 0, 0
			for ti := range e.Trees {
				for ni := range e.Trees[ti].Nodes {
					n := &e.Trees[ti].Nodes[ni]
					if n.Leaf {
						continue
					}
					in := ins[n.Feature]
					sp, err := quantize.Split(n, in, e.Float32)
					if err != nil {
						t.Fatalf("tree %d node %d: %v", ti, ni, err)
					}
					lo, hi := int64(in.Min), int64(in.Max)
					probe := []int64{lo, lo + 1, hi - 1, hi}
					if sp.Const {
						folded++
					} else {
						splits++
						T := int64(sp.T)
						probe = append(probe, T-1, T, T+1, T+2)
					}
					for _, r := range probe {
						if r < lo || r > hi {
							continue
						}
						want := low(n, in, r, e.Float32)
						got := sp.AllLow
						if !sp.Const {
							got = r <= int64(sp.T)
						}
						if got != want {
							t.Fatalf("tree %d node %d (x%d %s %v, %v): raw %d: integer test says low=%v, float says %v",
								ti, ni, n.Feature, n.Cmp, n.Threshold, sp, r, got, want)
						}
					}
				}
			}
			t.Logf("%d splits exact at T±1 and the range ends, %d constant over the range", splits, folded)
		})
	}
}

// TestSplitFloat32 covers XGBoost's float32 compare where float32 rounding of the feature moves
// the boundary away from t·2^Frac, exhaustively over a window around each threshold.
func TestSplitFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		frac     int
		center   float64
		spreadLS int64
	}{
		{0, 1 << 26, 2000},     // float32 spacing 8 raw steps
		{0, -(1 << 30), 5000},  // spacing 128, negative
		{16, 1000, 3000},       // 2^26 raw, spacing 8
		{30, 1.5, 4000},        // raw ~1.6e9, spacing 128
		{40, 1e-3, 3000},       // small values, high frac
		{-8, 1 << 36, 500},     // negative frac
		{24, 0.768, 1000},      // Q24 like ChooseInputs picks for o
		{16, -0.768, 1000},     // the RL-CC Q16 handler format
		{0, 0, 100},            // around zero: signed zero
		{31, 0.9999999, 10000}, // near the int32 edge
	}
	for _, c := range cases {
		for _, cmp := range []model.Cmp{model.CmpLT, model.CmpLE, model.CmpGT} {
			for k := 0; k < 20; k++ {
				centerRaw := math.Round(math.Ldexp(c.center, c.frac))
				lo := int64(max(centerRaw-float64(c.spreadLS), math.MinInt32))
				hi := int64(min(centerRaw+float64(c.spreadLS), math.MaxInt32))
				in := quantize.Input{Frac: c.frac, Min: int32(lo), Max: int32(hi)}
				// A float32 threshold near the window, or exactly on a raw value.
				r := lo + rng.Int64N(hi-lo+1)
				th := float64(float32(math.Ldexp(float64(r)+rng.Float64()*4-2, -c.frac)))
				if k%4 == 0 {
					th = float64(float32(in.Value(int32(r))))
				}
				n := &model.Node{Threshold: th, Cmp: cmp, Left: 1, Right: 2, Missing: model.MissingNaN}
				for _, f32 := range []bool{true, false} {
					sp, err := quantize.Split(n, in, f32)
					if err != nil {
						t.Fatal(err)
					}
					for r := lo; r <= hi; r++ {
						got := sp.AllLow
						if !sp.Const {
							got = r <= int64(sp.T)
						}
						if want := low(n, in, r, f32); got != want {
							t.Fatalf("Q%d x %s %v (f32 %v): raw %d: low=%v, float %v (T=%d)", c.frac, cmp, th, f32, r, got, want, sp.T)
						}
					}
				}
			}
		}
	}
}

// TestCatBoostGT: a > split swaps its children, and the whole model agrees with the float one
// on every raw input of a small range.
func TestCatBoostGT(t *testing.T) {
	m := &model.Model{Version: model.NativeVersion, Name: "catboost-like", Inputs: []string{"a", "b"},
		Ensemble: &model.Ensemble{Base: 0.25, Trees: []model.Tree{
			{Nodes: []model.Node{
				{Feature: 0, Threshold: 0.3, Cmp: model.CmpGT, Left: 1, Right: 2},
				{Feature: 1, Threshold: -0.5, Cmp: model.CmpGT, Left: 3, Right: 4},
				{Feature: 1, Threshold: -0.5, Cmp: model.CmpGT, Left: 5, Right: 6},
				{Leaf: true, Value: 1.5}, {Leaf: true, Value: -0.75},
				{Leaf: true, Value: 0.125}, {Leaf: true, Value: -2},
			}},
			{Nodes: []model.Node{
				{Feature: 1, Threshold: 0.70001, Cmp: model.CmpGT, Left: 1, Right: 2},
				{Leaf: true, Value: 0.001},
				{Feature: 0, Threshold: -1.01, Cmp: model.CmpGT, Left: 3, Right: 4},
				{Leaf: true, Value: -0.002}, {Leaf: true, Value: 0.003},
			}},
		}}}
	ins := []quantize.Input{{Name: "a", Frac: 6, Min: -128, Max: 127}, {Name: "b", Frac: 7, Min: -200, Max: 200}}
	ir, err := quantize.Trees(m, ins, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ir.Trees[0].Oblivious || ir.Trees[1].Oblivious {
		t.Errorf("oblivious = %v, %v; want true, false", ir.Trees[0].Oblivious, ir.Trees[1].Oblivious)
	}
	// The root x0 > 0.3 goes left for large x: after the swap its low side (x0 <= T) is the
	// float right child, node 2.
	if root := ir.Trees[0].Nodes[0]; ir.Trees[0].Nodes[root.Left].Src != 2 || root.T != 19 {
		t.Errorf("root = %+v, left child from source node %d; want T 19 (0.3·64 = 19.2) and the source's right child 2", root, ir.Trees[0].Nodes[root.Left].Src)
	}
	exhaustive(t, m, ir)
}

// exhaustive compares EvalScore with the exact sum of the float model's quantized leaves on
// every raw input of a model with small ranges.
func exhaustive(t *testing.T, m *model.Model, ir *quantize.TreeIR) {
	t.Helper()
	e := m.Ensemble
	x := make([]int32, len(ir.Inputs))
	v := make([]float64, len(ir.Inputs))
	var rec func(i int)
	rec = func(i int) {
		if i < len(x) {
			for r := ir.Inputs[i].Min; r <= ir.Inputs[i].Max; r++ {
				x[i] = r
				v[i] = ir.Inputs[i].Value(r)
				rec(i + 1)
			}
			return
		}
		want := 0.0
		for ti := range e.Trees {
			want += e.Trees[ti].Leaf(v, e.Float32).Value
		}
		want += e.Base
		got := math.Ldexp(float64(ir.EvalScore(x)), -ir.AccFrac)
		if math.Abs(got-want) > ir.Stats.LeafErr+1e-12 {
			t.Fatalf("x=%v: score %v, float %v, beyond the leaf error bound %g", x, got, want, ir.Stats.LeafErr)
		}
	}
	rec(0)
}

func TestNodeKindNames(t *testing.T) {
	for k := quantize.NodeKind(0); k < quantize.NodeKind(2); k++ {
		if strings.HasPrefix(k.String(), "NodeKind(") {
			t.Errorf("kind %d has no name", int(k))
		}
	}
	if s := quantize.NodeKind(2).String(); s != "NodeKind(2)" {
		t.Errorf("past the end: %q", s)
	}
}

func TestChooseInputs(t *testing.T) {
	ins, err := quantize.ChooseInputs([]string{"a", "o", "big", "tiny", "zero", "neg"},
		[]float64{0.8, -0.768, 0, 0, 0, -1},
		[]float64{1.2, 76.8, 3e9, 1e-6, 0, -1})
	if err != nil {
		t.Fatal(err)
	}
	want := []quantize.Input{
		{"a", 30, 858993459, 1288490189},
		{"o", 24, -12884902, 1288490189},
		{"big", -1, 0, 1500000000},
		{"tiny", 50, 0, 1125899907},
		{"zero", quantize.MaxFrac, 0, 0},
		{"neg", 31, math.MinInt32, math.MinInt32},
	}
	for i := range want {
		if ins[i] != want[i] {
			t.Errorf("input %d = %+v, want %+v", i, ins[i], want[i])
		}
		// One more fraction bit would not fit (the declared bounds at Frac+1).
		if in := ins[i]; in.Frac < quantize.MaxFrac {
			lo := math.Round(math.Ldexp(in.Value(in.Min), in.Frac+1))
			hi := math.Round(math.Ldexp(in.Value(in.Max), in.Frac+1))
			if lo >= math.MinInt32 && hi <= math.MaxInt32 && i != 1 && i != 0 && i != 2 && i != 3 {
				t.Errorf("input %d: Q%d would fit too", i, in.Frac+1)
			}
		}
	}
	for _, bad := range [][2]float64{{1, 0}, {math.NaN(), 1}, {0, math.Inf(1)}, {-1e30, 1e30}} {
		if _, err := quantize.ChooseInputs([]string{"x"}, []float64{bad[0]}, []float64{bad[1]}); err == nil {
			t.Errorf("range %v: no error", bad)
		}
	}
	if _, err := quantize.ChooseInputs([]string{"x", "y"}, []float64{0}, []float64{1}); err == nil {
		t.Error("mismatched lengths: no error")
	}
}

func TestModelHash(t *testing.T) {
	m := load(t, "../testdata/models/rlcc_xgb.json", xgboost.Parse)
	ir, err := quantize.Trees(m, rlccQ16(m.Inputs), quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := model.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if want := hex.EncodeToString(sum[:]); ir.ModelHash != want {
		t.Errorf("hash %s, want %s", ir.ModelHash, want)
	}
	// Same input, same IR text.
	ir2, err := quantize.Trees(m, rlccQ16(m.Inputs), quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ir.Dump() != ir2.Dump() {
		t.Error("two quantizations of one model dump differently")
	}
	if d := ir.Dump(); !strings.Contains(d, "sha256:"+ir.ModelHash) || !strings.Contains(d, "tree 9 src 9 depth 4") {
		t.Errorf("dump lacks the hash or tree 9:\n%.400s", d)
	}
}

func TestGoldenVsFloat(t *testing.T) {
	for _, s := range shippedModels(t) {
		t.Run(s.name, func(t *testing.T) {
			ir, err := quantize.Trees(s.m, s.formats(t), quantize.TreeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			e := s.m.Ensemble
			if ir.Stats.LeafErr > ir.Stats.LeafErrBound {
				t.Errorf("leaf error %g over its bound %g", ir.Stats.LeafErr, ir.Stats.LeafErrBound)
			}
			// The float model's own accumulation: float32 for XGBoost (each add rounds by at
			// most 2^-24 of a partial sum), float64 otherwise.
			mag := math.Abs(e.Base)
			for ti := range e.Trees {
				w := 0.0
				for _, n := range e.Trees[ti].Nodes {
					if n.Leaf {
						w = max(w, math.Abs(n.Value))
					}
				}
				mag += w
			}
			eps := 0x1p-52
			if e.Float32 {
				eps = 0x1p-24
			}
			accErr := float64(len(e.Trees)) * eps * mag

			rng := rand.New(rand.NewPCG(3, 4))
			x := make([]int32, len(ir.Inputs))
			v := make([]float64, len(x))
			var maxExact, maxFloat float64
			for k := 0; k < 20000; k++ {
				for i, in := range ir.Inputs {
					switch k % 5 {
					case 0:
						x[i] = in.Min
					case 1:
						x[i] = in.Max
					default:
						x[i] = in.Min + int32(rng.Int64N(int64(in.Max)-int64(in.Min)+1))
					}
					if k >= 2 && k%5 < 2 {
						x[i] = in.Min + int32(rng.Int64N(int64(in.Max)-int64(in.Min)+1))
					}
					v[i] = in.Value(x[i])
				}
				y := ir.OutValue(ir.Eval(x))
				exact := e.Base
				if e.Float32 {
					exact = float64(float32(e.Base))
				}
				for ti := range e.Trees {
					l := e.Trees[ti].Leaf(v, e.Float32).Value
					if e.Float32 {
						l = float64(float32(l))
					}
					exact += l
				}
				// The float model's raw score: its transform undone is not exact, so rebuild
				// the score the way Ensemble.Eval sums it.
				fl := rawScore(e, v)
				maxExact = max(maxExact, math.Abs(y-exact))
				maxFloat = max(maxFloat, math.Abs(y-fl))
			}
			if maxExact > ir.Stats.ScoreErr+1e-12 {
				t.Errorf("max |golden − exact float score| = %g over the bound %g", maxExact, ir.Stats.ScoreErr)
			}
			if maxFloat > ir.Stats.ScoreErr+accErr {
				t.Errorf("max |golden − float model| = %g over the bound %g + float accumulation %g", maxFloat, ir.Stats.ScoreErr, accErr)
			}
			t.Logf("max |golden − float model| = %.3g (vs exact sum %.3g); bound %.3g = leaves %.3g (≤ %.3g) + rounding %.3g, + float32 accumulation %.3g",
				maxFloat, maxExact, ir.Stats.ScoreErr, ir.Stats.LeafErr, ir.Stats.LeafErrBound, ir.Stats.OutErr, accErr)
		})
	}
}

// rawScore is Ensemble.Eval without its transform.
func rawScore(e *model.Ensemble, v []float64) float64 {
	c := *e
	c.Transform = model.TransformIdentity
	return c.Eval(v)
}

func stump(feature int, th float64, cmp model.Cmp, l, r float64) model.Tree {
	return model.Tree{Nodes: []model.Node{
		{Feature: feature, Threshold: th, Cmp: cmp, Left: 1, Right: 2},
		{Leaf: true, Value: l}, {Leaf: true, Value: r},
	}}
}

func ensemble(base float64, trees ...model.Tree) *model.Model {
	return &model.Model{Version: model.NativeVersion, Inputs: []string{"x"}, Ensemble: &model.Ensemble{Base: base, Trees: trees}}
}

var q16 = []quantize.Input{{Name: "x", Frac: 16, Min: -65536, Max: 65536}}

func TestOverflow(t *testing.T) {
	// 2^40 per leaf: Q24 would need 2^64, so the automatic choice lowers the fraction bits
	// until the sum fits int64 (and the output must then be clamped to fit int32).
	big := ensemble(0, stump(0, 0, model.CmpLT, 0x1p40, -0x1p40), stump(0, 0.5, model.CmpLT, 0x1p40, -0x1p40))
	ir, err := quantize.Trees(big, q16, quantize.TreeOptions{Clamp: true, ClampMin: -65536, ClampMax: 65536})
	if err != nil {
		t.Fatal(err)
	}
	if ir.AccFrac >= quantize.DefaultAccFrac || ir.AccBits != 64 {
		t.Errorf("AccFrac %d, AccBits %d; want below %d and 64", ir.AccFrac, ir.AccBits, quantize.DefaultAccFrac)
	}
	if y := ir.Eval([]int32{-65536}); y != 65536 {
		t.Errorf("clamped output %d, want 65536", y)
	}
	// An explicit frac that does not fit is an error, not a silent change.
	if _, err := quantize.Trees(big, q16, quantize.TreeOptions{AccFrac: 24, Clamp: true, ClampMax: 1}); err == nil || !strings.Contains(err.Error(), "int64") {
		t.Errorf("explicit Q24: err = %v, want an int64 overflow", err)
	}
	// Without a clamp the score range must fit int32 at Q16.
	if _, err := quantize.Trees(big, q16, quantize.TreeOptions{}); err == nil || !strings.Contains(err.Error(), "does not fit int32") {
		t.Errorf("unclamped: err = %v", err)
	}
	// Leaves no fraction bits can hold: refused.
	huge := ensemble(0, stump(0, 0, model.CmpLT, 1e30, -1e30))
	if _, err := quantize.Trees(huge, q16, quantize.TreeOptions{Clamp: true}); err == nil || !strings.Contains(err.Error(), "does not fit int64") {
		t.Errorf("1e30 leaf: err = %v", err)
	}
	// Many trees: the partial sums, not each leaf, overflow.
	var ts []model.Tree
	for range 64 {
		ts = append(ts, stump(0, 0, model.CmpLT, 0x1p36, 0x1p36))
	}
	if _, err := quantize.Trees(ensemble(0, ts...), q16, quantize.TreeOptions{AccFrac: 24, Clamp: true}); err == nil || !strings.Contains(err.Error(), "overflows int64") {
		t.Errorf("64 trees of 2^36: err = %v", err)
	}
}

func TestAccWidth(t *testing.T) {
	// Within int32 at Q24: |score| < 128 (including the rounding addend).
	small := ensemble(0.5, stump(0, 0, model.CmpLT, 1, -1), stump(0, 0.25, model.CmpLE, 2, -3))
	ir, err := quantize.Trees(small, q16, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ir.AccBits != 32 || ir.Acc != (quantize.Interval{Lo: -3.5*(1<<24) + 128, Hi: 3.5*(1<<24) + 128}) || ir.Addend != 128 {
		t.Errorf("acc %+v int%d", ir.Acc, ir.AccBits)
	}
	if ir.Out != (quantize.Interval{Lo: -3.5 * 65536, Hi: 3.5 * 65536}) {
		t.Errorf("out %+v", ir.Out)
	}
	wide := ensemble(0, stump(0, 0, model.CmpLT, 100, -100), stump(0, 0.25, model.CmpLE, 100, -100))
	if ir, err = quantize.Trees(wide, q16, quantize.TreeOptions{}); err != nil || ir.AccBits != 64 {
		t.Errorf("score up to 200 in Q24: int%d, %v; want int64", ir.AccBits, err)
	}
}

func TestRounding(t *testing.T) {
	// Base alone, Q24 → Q16 (k = 8): ties go up.
	for _, c := range []struct {
		acc  int64
		want int32
	}{{0, 0}, {127, 0}, {128, 1}, {-128, 0}, {-129, -1}, {384, 2}, {-384, -1}, {-385, -2}, {256, 1}} {
		ir := &quantize.TreeIR{AccFrac: 24, OutFrac: 16}
		if got := ir.Round(c.acc); got != c.want {
			t.Errorf("Round(%d) = %d, want %d", c.acc, got, c.want)
		}
	}
}

func TestFolding(t *testing.T) {
	// x in [-1, 1]: x < 5 is always true, x <= -3 never; the second tree folds to a leaf that
	// joins the base, the first keeps only its real split.
	m := ensemble(0.25,
		model.Tree{Nodes: []model.Node{
			{Feature: 0, Threshold: 5, Cmp: model.CmpLT, Left: 1, Right: 2},
			{Feature: 0, Threshold: 0.5, Cmp: model.CmpLT, Left: 3, Right: 4},
			{Leaf: true, Value: 100},
			{Leaf: true, Value: 1}, {Leaf: true, Value: 2},
		}},
		stump(0, -3, model.CmpLE, 7, 0.5),
	)
	ir, err := quantize.Trees(m, q16, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ir.Trees) != 1 || len(ir.Trees[0].Nodes) != 3 || ir.Base != 0.75*(1<<24) {
		t.Fatalf("trees %d (nodes %d), base %d:\n%s", len(ir.Trees), len(ir.Trees[0].Nodes), ir.Base, ir.Dump())
	}
	if len(ir.Stats.Folded) != 2 || !ir.Stats.Folded[0].Left || ir.Stats.Folded[1].Left || len(ir.Stats.ConstTrees) != 1 {
		t.Errorf("folded %+v, const trees %v", ir.Stats.Folded, ir.Stats.ConstTrees)
	}
	if ir.Out.Hi != 2.75*65536 || ir.Out.Lo != 1.75*65536 {
		t.Errorf("out %+v", ir.Out)
	}
	exhaustive(t, m, ir)
}

func TestMissingZero(t *testing.T) {
	// LightGBM missing type Zero sends x = 0 the default way.
	tree := stump(0, 0.5, model.CmpLE, 1, 2)
	tree.Nodes[0].Missing = model.MissingZero
	tree.Nodes[0].DefaultLeft = false // 0 <= 0.5 would go left: no threshold expresses it
	if _, err := quantize.Trees(ensemble(0, tree), q16, quantize.TreeOptions{}); err == nil || !strings.Contains(err.Error(), "missing type Zero") {
		t.Errorf("err = %v, want a Zero-missing refusal", err)
	}
	tree.Nodes[0].DefaultLeft = true // agrees with the threshold: fine
	ir, err := quantize.Trees(ensemble(0, tree), q16, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exhaustive(t, ensemble(0, tree), ir)
	// Zero not in range: fine either way.
	tree.Nodes[0].DefaultLeft = false
	pos := []quantize.Input{{Name: "x", Frac: 16, Min: 1, Max: 65536}}
	if _, err := quantize.Trees(ensemble(0, tree), pos, quantize.TreeOptions{}); err != nil {
		t.Error(err)
	}
	// Default directions of NaN-missing splits are ignored: int32 inputs are never NaN.
	tree.Nodes[0].Missing = model.MissingNaN
	if _, err := quantize.Trees(ensemble(0, tree), q16, quantize.TreeOptions{}); err != nil {
		t.Error(err)
	}
}

func TestBadInput(t *testing.T) {
	ok := ensemble(0, stump(0, 0, model.CmpLT, 1, -1))
	nan := ensemble(0, stump(0, math.NaN(), model.CmpLT, 1, -1))
	inf := ensemble(0, stump(0, 0, model.CmpLT, math.Inf(1), -1))
	for name, c := range map[string]struct {
		m   *model.Model
		ins []quantize.Input
		opt quantize.TreeOptions
	}{
		"nan threshold": {nan, q16, quantize.TreeOptions{}},
		"inf leaf":      {inf, q16, quantize.TreeOptions{}},
		"no formats":    {ok, nil, quantize.TreeOptions{}},
		"empty range":   {ok, []quantize.Input{{Frac: 1, Min: 2, Max: 1}}, quantize.TreeOptions{}},
		"frac":          {ok, []quantize.Input{{Frac: 99}}, quantize.TreeOptions{}},
		"out frac":      {ok, q16, quantize.TreeOptions{OutFrac: 31}},
		"acc frac":      {ok, q16, quantize.TreeOptions{OutFrac: 20, AccFrac: 18}},
		"clamp":         {ok, q16, quantize.TreeOptions{Clamp: true, ClampMin: 1}},
		"network":       {&model.Model{Inputs: []string{"x"}}, q16, quantize.TreeOptions{}},
	} {
		if _, err := quantize.Trees(c.m, c.ins, c.opt); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestObliviousTable(t *testing.T) {
	// Depth-3 oblivious tree on two features; the table lookup must equal the walk everywhere.
	nodes := []model.Node{
		{Feature: 0, Threshold: 0.1, Cmp: model.CmpLT, Left: 1, Right: 2},
		{Feature: 1, Threshold: -0.2, Cmp: model.CmpLE, Left: 3, Right: 4},
		{Feature: 1, Threshold: -0.2, Cmp: model.CmpLE, Left: 5, Right: 6},
	}
	for i := 3; i < 7; i++ {
		nodes = append(nodes, model.Node{Feature: 0, Threshold: 0.7, Cmp: model.CmpLT, Left: 2*i + 1, Right: 2*i + 2})
	}
	for i := 0; i < 8; i++ {
		nodes = append(nodes, model.Node{Leaf: true, Value: float64(i) - 3.5})
	}
	m := &model.Model{Version: model.NativeVersion, Inputs: []string{"a", "b"}, Ensemble: &model.Ensemble{Trees: []model.Tree{{Nodes: nodes}}}}
	ins := []quantize.Input{{Name: "a", Frac: 4, Min: -20, Max: 20}, {Name: "b", Frac: 4, Min: -20, Max: 20}}
	ir, err := quantize.Trees(m, ins, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &ir.Trees[0]
	if !tr.Oblivious || len(tr.Levels) != 3 || len(tr.Table) != 8 || ir.Stats.Oblivious != 1 {
		t.Fatalf("tree %+v", tr)
	}
	for a := int32(-20); a <= 20; a++ {
		for b := int32(-20); b <= 20; b++ {
			x := []int32{a, b}
			idx := 0
			for _, lv := range tr.Levels {
				idx <<= 1
				if x[lv.Feature] > lv.T {
					idx |= 1
				}
			}
			if got, want := tr.Table[idx], tr.Leaf(x).Value; got != want {
				t.Fatalf("x=%v: table %d, walk %d", x, got, want)
			}
		}
	}
	exhaustive(t, m, ir)
}

// TestFloat32Boundary: at Q30, float32 rounding of the feature moves XGBoost's boundary for
// x < float32(0.1) below the float64 one. t = 13421773·2^-27 = 107374184·2^-30; raw/2^30 rounds
// to float32 in steps of 8 raw; the midpoint 107374180 below t ties to the even 13421772·2^-27 <
// t, so it is the last raw that goes left, three below the float64 boundary 107374183.
func TestFloat32Boundary(t *testing.T) {
	th := float64(float32(0.1))
	in := quantize.Input{Frac: 30, Min: 100000000, Max: 120000000}
	n := &model.Node{Threshold: th, Cmp: model.CmpLT, Left: 1, Right: 2}
	s32, err := quantize.Split(n, in, true)
	if err != nil {
		t.Fatal(err)
	}
	s64, err := quantize.Split(n, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if s64.T != 107374183 || s32.T != 107374180 {
		t.Fatalf("T = %d (float32 compare), %d (float64); want 107374180 and 107374183", s32.T, s64.T)
	}
	for r := int64(s32.T) - 20; r <= int64(s64.T)+20; r++ {
		if got, want := r <= int64(s32.T), low(n, in, r, true); got != want {
			t.Errorf("raw %d: %v, float32 compare %v", r, got, want)
		}
	}
}

func TestEdgeValues(t *testing.T) {
	m := ensemble(0, stump(0, 0.5, model.CmpLT, 1, -1), stump(0, -1.5, model.CmpLE, 1, -1), stump(0, 0.5, model.CmpLE, 1, 2))
	ir, err := quantize.Trees(m, []quantize.Input{{Name: "x", Frac: 1, Min: -3, Max: 3}}, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// T = 0 (x < 0.5), −3 (x <= −1.5), 1 (x <= 0.5 at Q1: raw 1 is 0.5).
	want := []int32{-3, -2, -1, 0, 1, 2, 3}
	if got := ir.EdgeValues(0); !slices.Equal(got, want) {
		t.Errorf("edge values %v, want %v", got, want)
	}
}

// TestBreastCancerFidelity: the golden model on the 57 test rows, quantized to the formats
// chosen from their ranges, against LightGBM's own predicted probabilities (issue 4: ≤ 1e-3).
func TestBreastCancerFidelity(t *testing.T) {
	m := load(t, "../testdata/lightgbm/lg_dart_breast_cancer.model", lightgbm.Parse)
	lo, hi := tsvRanges(t, "../testdata/lightgbm/breast_cancer_test.tsv")
	ins, err := quantize.ChooseInputs(m.Inputs, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := quantize.Trees(m, ins, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := readFloats(t, "../testdata/lightgbm/breast_cancer_test.tsv")
	preds := readFloats(t, "../testdata/lightgbm/lg_dart_breast_cancer_true_predictions.txt")
	worst := 0.0
	for i, row := range rows {
		x := make([]int32, len(row))
		for j, v := range row {
			x[j] = ins[j].Quantize(v)
		}
		worst = max(worst, math.Abs(ir.Predict(ir.Eval(x))-preds[i][0]))
	}
	if worst > 1e-3 {
		t.Errorf("max |golden − LightGBM| = %g in probability, want ≤ 1e-3", worst)
	}
	t.Logf("max |golden − LightGBM| = %.3g in probability over %d rows", worst, len(rows))
}

func readFloats(t *testing.T, path string) [][]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row []float64
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}
