package distill

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// synth is a deterministic dataset of n rows, nf features uniform on [0, 1), target f(x).
func synth(n, nf int, seed uint64, f func(x []float64) float64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Dataset{X: make([][]float64, nf), Y: make([]float64, n)}
	for j := range nf {
		d.Names = append(d.Names, string(rune('a'+j)))
		d.X[j] = make([]float64, n)
	}
	x := make([]float64, nf)
	for r := range n {
		for j := range nf {
			x[j] = rng.Float64()
			d.X[j][r] = x[j]
		}
		d.Y[r] = f(x)
	}
	return d
}

func smooth(x []float64) float64 {
	return math.Sin(3*x[0]) + x[1]*x[1] - 0.5*x[2]*x[0]
}

func TestDeterministicAcrossThreads(t *testing.T) {
	d := synth(50000, 4, 1, smooth)
	var prev []byte
	for _, th := range []int{1, 2, 3} {
		m, _, err := Train(d, nil, Options{Trees: 5, Depth: 4, LearningRate: 1, L2: 1, Threads: th, Refit: true, Corrective: true, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		b, err := model.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && !bytes.Equal(prev, b) {
			t.Fatalf("Threads=%d gives a different model", th)
		}
		prev = b
	}
}

// The row groups are numbered alike whether finish splits them in its pass (two halves, then
// renumber) or refine does with a map (too many keys for the tables): the models are equal.
func TestGroupSplitPaths(t *testing.T) {
	d := synth(30000, 4, 3, smooth)
	o := Options{Trees: 6, Depth: 4, LearningRate: 0.5, L2: 1, Refit: true, Corrective: true, Threads: 2}
	train := func() []byte {
		m, _, err := Train(d, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := model.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fused := train()
	defer func(k int) { maxGroupKeys = k }(maxGroupKeys)
	maxGroupKeys = 0
	if !bytes.Equal(fused, train()) {
		t.Fatal("refine's row groups give a different model than finish's")
	}
}

// The gradients the trainer keeps are the model's residuals at every depth (finish moves each
// row down the last level itself; at depth 1 the root is that level), also when a tree stops
// growing above its depth (a target of few steps), and with refine's row groups (which take
// each row's leaf from the boosting state's nid).
func TestGradientsFollowTheModel(t *testing.T) {
	defer func(k int) { maxGroupKeys = k }(maxGroupKeys)
	steps := func(x []float64) float64 { return math.Floor(4*x[0]) + 2*math.Floor(2*x[1]) }
	for _, target := range []func([]float64) float64{smooth, steps} {
		d := synth(5000, 3, 4, target)
		for _, depth := range []int{1, 2, 3, 5} {
			for _, o := range []Options{{}, {Oblivious: true}, {Corrective: true}} {
				for _, keys := range []int{1 << 24, 0} {
					maxGroupKeys = keys
					o.Trees, o.Depth, o.LearningRate, o.L2 = 3, depth, 0.7, 1
					m, rep, err := Train(d, nil, o)
					if err != nil {
						t.Fatal(err)
					}
					if got := evalRMSE(m, d); math.Abs(got-rep.TrainRMSE) > 1e-9 {
						t.Errorf("depth %d, %+v, group keys %d: reported train RMSE %v, model gives %v", depth, o, keys, rep.TrainRMSE, got)
					}
				}
			}
		}
	}
}

func TestDeterministicOblivious(t *testing.T) {
	d := synth(40000, 3, 2, smooth)
	a, _, err := Train(d, nil, Options{Trees: 4, Depth: 3, LearningRate: 1, Oblivious: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Train(d, nil, Options{Trees: 4, Depth: 3, LearningRate: 1, Oblivious: true, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := model.Marshal(a)
	jb, _ := model.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("oblivious model differs between Threads=1 and 2")
	}
}

// A piecewise-constant target whose steps lie between sample values is recovered exactly by
// one tree of enough depth (learning rate 1, λ = 0).
func TestPiecewiseConstantRecovered(t *testing.T) {
	step := func(x []float64) float64 {
		y := 0.0
		if x[0] > 0.5 {
			y += 1
		}
		if x[1] > 0.25 {
			y += 3
		} else if x[2] > 0.75 {
			y -= 2
		}
		return y
	}
	// Features take 100 distinct values, fewer than the bins: the split search is exact.
	d := synth(20000, 4, 3, step)
	for f := range d.X {
		for r, v := range d.X[f] {
			d.X[f][r] = math.Floor(v*100) / 100
		}
	}
	for r := range d.Y {
		d.Y[r] = step([]float64{d.X[0][r], d.X[1][r], d.X[2][r], d.X[3][r]})
	}
	train, test := d.Split(0.2, 1)
	m, rep, err := Train(train, test, Options{Trees: 3, Depth: 3, LearningRate: 1, L2: 0})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainRMSE > 1e-12 {
		t.Errorf("train RMSE %g, want 0", rep.TrainRMSE)
	}
	if rep.HeldOutRMSE > 1e-12 {
		t.Errorf("held-out RMSE %g", rep.HeldOutRMSE)
	}
	if rep.Rounds != 1 {
		t.Errorf("%d rounds, want 1 (the first tree is exact, the next finds no split)", rep.Rounds)
	}
	for _, n := range m.Ensemble.Trees[0].Nodes {
		if !n.Leaf && n.Feature == 3 {
			t.Errorf("split on irrelevant feature 3: %+v", n)
		}
	}
}

func TestErrors(t *testing.T) {
	good := func() *Dataset { return synth(100, 3, 4, smooth) }
	ok := Options{Trees: 2, Depth: 2}
	for _, c := range []struct {
		name  string
		train *Dataset
		valid *Dataset
		opt   Options
	}{
		{"trees 0", good(), nil, Options{Trees: 0, Depth: 2}},
		{"depth 0", good(), nil, Options{Trees: 2, Depth: 0}},
		{"depth too large", good(), nil, Options{Trees: 2, Depth: MaxDepth + 1}},
		{"nil dataset", nil, nil, ok},
		{"empty dataset", &Dataset{Names: []string{"a"}, X: [][]float64{{}}, Y: nil}, nil, ok},
		{"no features", &Dataset{Y: []float64{1}}, nil, ok},
		{"NaN target", func() *Dataset { d := good(); d.Y[7] = math.NaN(); return d }(), nil, ok},
		{"Inf feature", func() *Dataset { d := good(); d.X[1][3] = math.Inf(1); return d }(), nil, ok},
		{"short column", func() *Dataset { d := good(); d.X[1] = d.X[1][:50]; return d }(), nil, ok},
		{"names width", func() *Dataset { d := good(); d.Names = d.Names[:1]; return d }(), nil, ok},
		{"valid width", good(), synth(10, 4, 5, smooth), ok},
		{"valid NaN", good(), func() *Dataset { d := good(); d.Y[0] = math.NaN(); return d }(), ok},
		{"weights width", good(), nil, Options{Trees: 2, Depth: 2, FeatureWeights: []float64{1}}},
		{"negative weight", good(), nil, Options{Trees: 2, Depth: 2, FeatureWeights: []float64{1, -1, 1}}},
		{"grid width", good(), nil, Options{Trees: 2, Depth: 2, Grid: rlccGrid()[:1]}},
		{"bins", good(), nil, Options{Trees: 2, Depth: 2, Bins: 1000}},
		{"negative L2", good(), nil, Options{Trees: 2, Depth: 2, L2: -1}},
		{"NaN learning rate", good(), nil, Options{Trees: 2, Depth: 2, LearningRate: math.NaN()}},
	} {
		if _, _, err := Train(c.train, c.valid, c.opt); err == nil {
			t.Errorf("%s: no error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// The trainer finds a NaN or infinity in its own passes over the values; the error names the
// first one, as Dataset.Check does, with or without a grid, and with the refit's own hold-out.
func TestNonFiniteNamed(t *testing.T) {
	for _, c := range []struct {
		set  func(d *Dataset)
		want string
	}{
		{func(d *Dataset) { d.X[1][70] = math.Inf(-1); d.X[2][5] = math.NaN() }, "feature 1 (b) row 70 is -Inf"},
		{func(d *Dataset) { d.X[3][0] = math.Inf(1) }, "feature 3 (d) row 0 is +Inf"},
		{func(d *Dataset) { d.X[0][999] = math.NaN(); d.Y[3] = math.NaN() }, "feature 0 (a) row 999 is NaN"},
		{func(d *Dataset) { d.Y[998] = math.Inf(1) }, "target row 998 is +Inf"},
	} {
		for _, opt := range []Options{{Trees: 2, Depth: 2}, {Trees: 2, Depth: 2, Grid: rlccGrid()}, {Trees: 2, Depth: 2, Refit: true}} {
			d := synth(1000, 4, 3, smooth)
			c.set(d)
			_, _, err := Train(d, nil, opt)
			if want := "training set: distill: " + c.want; err == nil || err.Error() != want {
				t.Errorf("grid %v, refit %v: got %v, want %s", opt.Grid != nil, opt.Refit, err, want)
			}
		}
	}
}

func TestSplit(t *testing.T) {
	d := synth(1000, 3, 6, smooth)
	a, b := d.Split(0.25, 9)
	c, e := d.Split(0.25, 9)
	if a.Rows() != 750 || b.Rows() != 250 {
		t.Fatalf("split sizes %d, %d", a.Rows(), b.Rows())
	}
	for i := range a.Y {
		if a.Y[i] != c.Y[i] || a.X[1][i] != c.X[1][i] {
			t.Fatal("Split is not deterministic")
		}
	}
	for i := range b.Y {
		if b.Y[i] != e.Y[i] {
			t.Fatal("Split is not deterministic")
		}
	}
	f, _ := d.Split(0.25, 10)
	same := true
	for i := range f.Y {
		same = same && f.Y[i] == a.Y[i]
	}
	if same {
		t.Error("different seeds give the same split")
	}
}

func rlccGrid() []quantize.Input {
	return quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
}

// With Grid, every threshold is a grid midpoint, quantize.Trees compiles every split to the
// integer threshold k (no folding), the float split sends k left and k+1 right (so, being
// monotone, agrees with the integer split at every grid point), and the golden integer model
// equals the float model on grid points up to the leaf rounding bound.
func TestGridExact(t *testing.T) {
	grid := rlccGrid()
	for _, obl := range []bool{false, true} {
		d := trainerStates(t, 30000, 7)
		m, _, err := Train(d, nil, Options{Trees: 6, Depth: 4, LearningRate: 1, L2: 1, Grid: grid, Oblivious: obl})
		if err != nil {
			t.Fatal(err)
		}
		splits := 0
		for ti, tr := range m.Ensemble.Trees {
			for ni := range tr.Nodes {
				n := &tr.Nodes[ni]
				if n.Leaf {
					continue
				}
				splits++
				in := grid[n.Feature]
				h := math.Ldexp(n.Threshold, in.Frac) - 0.5
				k := int64(h)
				if float64(k) != h || k < int64(in.Min) || k >= int64(in.Max) {
					t.Fatalf("tree %d node %d: threshold %v is not a midpoint of %v", ti, ni, n.Threshold, in)
				}
				if !n.GoesLeft(in.Value(int32(k)), false) || n.GoesLeft(in.Value(int32(k+1)), false) {
					t.Fatalf("tree %d node %d: float split does not separate raw %d and %d", ti, ni, k, k+1)
				}
				is, err := quantize.Split(n, in, false)
				if err != nil || is.Const || int64(is.T) != k {
					t.Fatalf("tree %d node %d: integer split %+v, %v; want T = %d", ti, ni, is, err, k)
				}
			}
		}
		if splits == 0 {
			t.Fatal("no splits")
		}
		ir, err := quantize.Trees(m, grid, quantize.TreeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ir.Stats.Folded) != 0 {
			t.Errorf("%d splits folded", len(ir.Stats.Folded))
		}
		if obl && ir.Stats.Oblivious != len(m.Ensemble.Trees) {
			t.Errorf("quantize sees %d of %d trees as oblivious", ir.Stats.Oblivious, len(m.Ensemble.Trees))
		}
		raw := make([]int32, 4)
		x := make([]float64, 4)
		for r := range d.Rows() {
			for f := range raw {
				raw[f] = grid[f].Quantize(d.X[f][r])
				x[f] = grid[f].Value(raw[f])
			}
			// Same leaf in every tree.
			for ti := range ir.Trees {
				it := &ir.Trees[ti]
				fl := m.Ensemble.Trees[it.Src].Leaf(x, false)
				if &m.Ensemble.Trees[it.Src].Nodes[it.Leaf(raw).Src] != fl {
					t.Fatalf("row %d tree %d: integer and float trees reach different leaves", r, ti)
				}
			}
			got, want := ir.OutValue(ir.Eval(raw)), m.Eval(nil, x)[0]
			if math.Abs(got-want) > ir.Stats.ScoreErr {
				t.Fatalf("row %d: golden %v, float %v, bound %v", r, got, want, ir.Stats.ScoreErr)
			}
		}
	}
}

func TestFeatureWeightZero(t *testing.T) {
	d := synth(20000, 3, 8, smooth)
	m, _, err := Train(d, nil, Options{Trees: 5, Depth: 4, LearningRate: 1, L2: 1, FeatureWeights: []float64{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range m.Ensemble.Trees {
		for _, n := range tr.Nodes {
			if !n.Leaf && n.Feature == 0 {
				t.Fatal("split on a feature of weight 0")
			}
		}
	}
}

func TestOblivious(t *testing.T) {
	d := synth(30000, 4, 9, smooth)
	m, _, err := Train(d, nil, Options{Trees: 5, Depth: 4, LearningRate: 1, L2: 1, Oblivious: true, MinLeaf: 5})
	if err != nil {
		t.Fatal(err)
	}
	for ti, tr := range m.Ensemble.Trees {
		level := []int{0}
		for depth := 0; len(level) > 0; depth++ {
			var next []int
			first := tr.Nodes[level[0]]
			for _, i := range level {
				n := tr.Nodes[i]
				if n.Leaf != first.Leaf || (!n.Leaf && (n.Feature != first.Feature || n.Threshold != first.Threshold)) {
					t.Fatalf("tree %d level %d: nodes differ: %+v vs %+v", ti, depth, n, first)
				}
				if !n.Leaf {
					next = append(next, n.Left, n.Right)
				}
			}
			level = next
		}
	}
}

func TestRefitNotWorse(t *testing.T) {
	d := trainerStates(t, 40000, 10)
	train, valid := d.Split(0.2, 3)
	for _, trees := range []int{3, 8} {
		m, rep, err := Train(train, valid, Options{Trees: trees, Depth: 3, LearningRate: 1, L2: 1, Refit: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.HeldOutRMSE > rep.BoostHeldOutRMSE {
			t.Errorf("trees %d: refit held-out RMSE %v > boosted %v", trees, rep.HeldOutRMSE, rep.BoostHeldOutRMSE)
		}
		if got := evalRMSE(m, valid); math.Abs(got-rep.HeldOutRMSE) > 1e-12 {
			t.Errorf("reported held-out RMSE %v, model gives %v", rep.HeldOutRMSE, got)
		}
		if got := evalRMSE(m, train); math.Abs(got-rep.TrainRMSE) > 1e-9 {
			t.Errorf("reported train RMSE %v, model gives %v", rep.TrainRMSE, got)
		}
		t.Logf("trees %d: held-out %v → %v (applied %v)", trees, rep.BoostHeldOutRMSE, rep.HeldOutRMSE, rep.RefitApplied)
	}
	// With no validation set, Refit holds out RefitHeldOut of the rows itself.
	_, rep, err := Train(train, nil, Options{Trees: 4, Depth: 3, LearningRate: 1, L2: 1, Refit: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeldOutRows == 0 || rep.TrainRows+rep.HeldOutRows != train.Rows() || rep.HeldOutRMSE > rep.BoostHeldOutRMSE {
		t.Errorf("internal hold-out: %+v", rep)
	}
}

func evalRMSE(m *model.Model, d *Dataset) float64 {
	x := make([]float64, len(d.X))
	s := 0.0
	for r := range d.Rows() {
		for f := range x {
			x[f] = d.X[f][r]
		}
		e := m.Eval(nil, x)[0] - d.Y[r]
		s += e * e
	}
	return math.Sqrt(s / float64(d.Rows()))
}

// The trainer fits the teacher: the report's RMSEs agree with the model's own evaluator, and
// more trees fit better.
func TestFitsTeacher(t *testing.T) {
	d := trainerStates(t, 60000, 11)
	train, valid := d.Split(0.2, 4)
	prev := math.Inf(1)
	for _, trees := range []int{2, 10} {
		m, rep, err := Train(train, valid, Options{Trees: trees, Depth: 4, LearningRate: 1, L2: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := evalRMSE(m, valid); math.Abs(got-rep.HeldOutRMSE) > 1e-9 {
			t.Errorf("reported held-out RMSE %v, model gives %v", rep.HeldOutRMSE, got)
		}
		if got := evalRMSE(m, train); math.Abs(got-rep.TrainRMSE) > 1e-9 {
			t.Errorf("reported train RMSE %v, model gives %v", rep.TrainRMSE, got)
		}
		if rep.HeldOutRMSE >= prev {
			t.Errorf("%d trees: held-out RMSE %v not below %v", trees, rep.HeldOutRMSE, prev)
		}
		prev = rep.HeldOutRMSE
		if m.Ensemble.Trees[0].Depth() > 4 {
			t.Errorf("depth %d", m.Ensemble.Trees[0].Depth())
		}
	}
}

func TestProgress(t *testing.T) {
	d := synth(5000, 3, 12, smooth)
	var got []int
	_, rep, err := Train(d, nil, Options{Trees: 4, Depth: 2, Progress: func(r, total int) {
		if total != 4 {
			t.Errorf("total %d", total)
		}
		got = append(got, r)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rep.Rounds || got[len(got)-1] != rep.Rounds {
		t.Errorf("progress %v for %d rounds", got, rep.Rounds)
	}
}

func TestBinOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := range 40 {
		e := make([]float64, n)
		for i := range e {
			e[i] = float64(i) - 0.5*float64(rng.IntN(2))
		}
		for range 200 {
			v := float64(rng.IntN(2*n+4))/2 - 1.5
			if got, want := binOf(e, v), sort.SearchFloat64s(e, v); got != want {
				t.Fatalf("binOf(%v, %v) = %d, want %d", e, v, got, want)
			}
		}
	}
}

// The bucketed binner finds binOf's bin for every value: at, next to and between edges that
// crowd a small part of their span (as o's quantiles do) or sit far apart.
func TestBinner(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	spans := [][]float64{{0, 1e-300}, {-1, 1}, {-0.768, 76.8}, {-1e300, 1e300}}
	for _, sp := range spans {
		for _, n := range []int{0, 1, 2, 3, 255, 4000, 9000} {
			e := make([]float64, 0, n)
			for range n {
				u := rng.Float64()
				if rng.IntN(2) == 0 {
					u *= 0.01 // crowded
				}
				e = append(e, sp[0]+u*(sp[1]-sp[0]))
			}
			slices.Sort(e)
			e = slices.Compact(e)
			bn := newBinner(e)
			check := func(v float64) {
				if got, want := binWith(bn, v), binOf(e, v); got != want {
					t.Fatalf("%d edges on %v: bin(%v) = %d, binOf %d", len(e), sp, v, got, want)
				}
			}
			for _, x := range e {
				check(x)
				check(math.Nextafter(x, math.Inf(-1)))
				check(math.Nextafter(x, math.Inf(1)))
			}
			for range 20000 {
				check(sp[0] + (1.2*rng.Float64()-0.1)*(sp[1]-sp[0]))
			}
		}
	}
}

func TestRefitPassesError(t *testing.T) {
	if _, _, err := Train(synth(100, 3, 1, smooth), nil, Options{Trees: 1, Depth: 1, Refit: true, RefitPasses: -1}); err == nil {
		t.Error("negative RefitPasses: no error")
	}
}

// Corrective boosting reports what its model computes and fits the training rows at least as
// well as plain boosting here.
func TestCorrective(t *testing.T) {
	d := trainerStates(t, 40000, 13)
	train, valid := d.Split(0.2, 5)
	_, plain, err := Train(train, valid, Options{Trees: 8, Depth: 3, LearningRate: 1, L2: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, rep, err := Train(train, valid, Options{Trees: 8, Depth: 3, LearningRate: 1, L2: 1, Corrective: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := evalRMSE(m, valid); math.Abs(got-rep.HeldOutRMSE) > 1e-12 {
		t.Errorf("reported held-out RMSE %v, model gives %v", rep.HeldOutRMSE, got)
	}
	if got := evalRMSE(m, train); math.Abs(got-rep.TrainRMSE) > 1e-9 {
		t.Errorf("reported train RMSE %v, model gives %v", rep.TrainRMSE, got)
	}
	if rep.TrainRMSE > plain.TrainRMSE {
		t.Errorf("corrective train RMSE %v > plain %v", rep.TrainRMSE, plain.TrainRMSE)
	}
	t.Logf("train RMSE: plain %v, corrective %v; held-out %v, %v", plain.TrainRMSE, rep.TrainRMSE, plain.HeldOutRMSE, rep.HeldOutRMSE)
}

func TestFloatKey(t *testing.T) {
	vs := []float64{math.Inf(-1), -1e300, -2.5, -1, -1e-300, 0, 1e-300, 0.5, 1, 3, 1e300}
	for i, v := range vs {
		if keyFloat(floatKey(v)) != v {
			t.Errorf("keyFloat(floatKey(%v)) = %v", v, keyFloat(floatKey(v)))
		}
		if i > 0 && floatKey(vs[i-1]) >= floatKey(v) {
			t.Errorf("floatKey(%v) >= floatKey(%v)", vs[i-1], v)
		}
	}
	if floatKey(math.Copysign(0, -1)) != floatKey(0) {
		t.Error("−0 and +0 differ")
	}
}

// The exact refit and coordinate descent reach the same optimum (descent stops at a small
// relative loss drop, so up to a small tolerance). The ridge penalty is all but zero here, so
// that the optimum is the train RMSE's: with λ = 1 two solutions can trade RMSE for penalty.
func TestExactRefitMatchesDescent(t *testing.T) {
	d := trainerStates(t, 20000, 14)
	train, valid := d.Split(0.2, 6)
	o := Options{Trees: 4, Depth: 3, LearningRate: 1, L2: 1e-6, Refit: true, RefitPasses: 5000}
	_, exact, err := Train(train, valid, o)
	if err != nil {
		t.Fatal(err)
	}
	exactRefit = false
	defer func() { exactRefit = true }()
	_, cd, err := Train(train, valid, o)
	if err != nil {
		t.Fatal(err)
	}
	if !exact.RefitApplied || !cd.RefitApplied || math.Abs(exact.TrainRMSE-cd.TrainRMSE) > 1e-5*exact.TrainRMSE {
		t.Errorf("exact refit: train RMSE %v (applied %v), descent %v (applied %v)", exact.TrainRMSE, exact.RefitApplied, cd.TrainRMSE, cd.RefitApplied)
	}
	t.Logf("train RMSE exact %.12f, descent %.12f", exact.TrainRMSE, cd.TrainRMSE)
}

func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{0, 10, 1000, 100000} {
		for _, mask := range []uint64{0xff, 0xffff_ffff, ^uint64(0), 0xff00_0000_00ff_0000} {
			s := make([]uint64, n)
			for i := range s {
				s[i] = rng.Uint64() & mask
			}
			want := slices.Clone(s)
			slices.Sort(want)
			radixSort(s)
			if !slices.Equal(s, want) {
				t.Fatalf("n %d mask %x: not sorted", n, mask)
			}
		}
	}
}

// binWith bins v as binData does: quick, else search.
func binWith(bn *binner, v float64) int {
	if k, ok := bn.quick(v); ok {
		return k
	}
	return bn.search(v)
}
