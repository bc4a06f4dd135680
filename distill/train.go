package distill

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
)

const (
	// DefaultLearningRate is the shrinkage used when Options.LearningRate is 0 (XGBoost's
	// default). Distilling into a small budget (10 trees) usually wants 1.0; set it explicitly.
	DefaultLearningRate = 0.3
	// DefaultBins is the number of histogram bins per feature used when Options.Bins is 0; it is
	// also the maximum (bin indices are bytes).
	DefaultBins = 256
	// MaxDepth is the deepest tree Train grows.
	MaxDepth = 12
	// DefaultRefitPasses is the most coordinate-descent passes of the optional leaf refit when
	// Options.RefitPasses is 0.
	DefaultRefitPasses = 500
	// RefitHeldOut is the fraction of the training set held out internally for the refit
	// decision when Train is given no validation set.
	RefitHeldOut = 0.1
)

// Options controls Train. The zero value of every field except Trees and Depth is usable.
type Options struct {
	// Trees and Depth limit the ensemble: at most Trees trees of depth at most Depth. Both
	// must be ≥ 1; Depth at most MaxDepth. Boosting stops early when a round finds no split
	// that improves the loss (the ensemble keeps at least one tree).
	Trees, Depth int
	// LearningRate shrinks every tree's leaves; 0 means DefaultLearningRate (0.3). It must be
	// finite and ≥ 0; the benchmark (and a 10-tree budget) uses 1.0.
	LearningRate float64
	// L2 is the leaf regularisation λ ≥ 0: a leaf's value is −G/(H+λ) (squared loss: H is the
	// number of rows in the leaf, G the sum of residuals pred − y), times LearningRate. Split
	// gain is G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ).
	L2 float64
	// MinLeaf is the minimum number of training rows in a leaf; 0 means 1. With Oblivious,
	// it is enforced on the children of every node that has at least 2·MinLeaf rows (smaller
	// nodes are split anyway, to keep the tree symmetric; their leaves are shrunk by λ, and an
	// empty leaf is 0).
	MinLeaf int
	// FeatureWeights multiply each feature's split gain (CatBoost's feature_weights): 0 means
	// never split on that feature. nil means 1 for every feature; otherwise one finite
	// weight ≥ 0 per feature.
	FeatureWeights []float64
	// Oblivious grows symmetric trees: every node of a level uses the same (feature,
	// threshold), chosen to maximise the level's total (weighted) gain.
	Oblivious bool
	// Grid, when set, has one quantize.Input per feature: the fixed-point grid the deployed
	// feature is computed on. Every threshold is then a midpoint (k + 0.5)/2^Frac between two
	// neighbouring grid values with Min ≤ k < Max, so quantize.Trees maps every split exactly
	// and no grid point changes branch. Bin edges are chosen among those midpoints by sample
	// quantiles. nil: thresholds are midpoints between neighbouring distinct sample values
	// (all of them when a feature has at most Bins distinct values, else at quantiles).
	Grid []quantize.Input
	// Bins is the number of histogram bins per feature, 2..256; 0 means DefaultBins. A
	// feature with at most Bins distinct sample values gets every midpoint (an exact search).
	Bins int
	// Refit, after boosting, refits all leaf values (and the base) jointly on the training
	// set, without shrinkage: the ridge (λ = L2 on leaves) least-squares optimum for the
	// trees' structure. Rows that reach the same leaf in every tree form a group (a few
	// thousand for 20 trees of depth 4), so the problem is small: with λ > 0 and at most
	// 639 leaves it is solved exactly (Cholesky on the normal equations), otherwise by
	// coordinate descent (see RefitPasses).
	// The refit is kept only if it lowers the RMSE on the validation set given to Train; with
	// no validation set, Train holds out RefitHeldOut of the training rows (chosen by Seed)
	// for that decision and trains on the rest.
	Refit bool
	// Corrective refits all leaves and the base jointly (as Refit does, unconditionally)
	// after every boosting round, so each tree fits the residuals of the jointly optimal
	// ensemble so far ("totally corrective" boosting). These refits stop at a relative loss
	// drop below 1e-6 per pass (warm-started, they take few passes); the final Refit, if
	// set, still runs to 1e-10 and is still kept only if it helps on held-out rows.
	Corrective bool
	// RefitPasses is the most coordinate-descent passes when the refit is not solved
	// exactly; 0 means DefaultRefitPasses. A pass sets every tree's leaves, then the base, to
	// their optimum given the rest, on the row groups; it stops earlier once a pass lowers the
	// training loss by less than a relative 1e-10.
	RefitPasses int
	// Seed fixes every pseudo-random choice (only the internal refit hold-out uses one). The
	// result is identical for any Threads.
	Seed uint64
	// Threads is the number of goroutines; ≤ 0 means runtime.GOMAXPROCS(0).
	Threads int
	// Progress, when set, is called after each boosting round with round = 1..total.
	Progress func(round, total int)
}

// Report describes a training run.
type Report struct {
	// Rounds is the number of trees built.
	Rounds int
	// TrainRMSE is the final model's RMSE on the rows it was trained on.
	TrainRMSE float64
	// HeldOutRMSE is the final model's RMSE on the validation set (the internal hold-out when
	// Refit had to make one); NaN when there is none.
	HeldOutRMSE float64
	// Refit says whether a refit was tried; RefitApplied whether it was kept.
	// BoostHeldOutRMSE is the held-out RMSE before the refit.
	Refit, RefitApplied bool
	BoostHeldOutRMSE    float64
	// TrainRows and HeldOutRows count the rows used.
	TrainRows, HeldOutRows int
	// Thresholds is the number of candidate thresholds per feature.
	Thresholds []int
	// Elapsed is Train's wall time.
	Elapsed time.Duration
}

// Train fits a gradient-boosted ensemble of regression trees to train (squared loss) and
// reports its error on valid (which may be nil). The model has Inputs = train.Names, Base =
// mean(Y) (or the refit base), identity transform, and at most opt.Trees trees of depth at
// most opt.Depth whose splits are "x <= t goes left" (model.CmpLE); it passes Validate.
//
// The algorithm: per feature, candidate thresholds are fixed once (see Options.Grid and
// Bins) and every row's bin index computed once (row-major bytes). Trees grow level by
// level: per-node gradient histograms are summed for all features in one pass over each of
// two fixed row halves (in parallel, then added in order, so results do not depend on
// Threads), only for the smaller child of each split (the larger is its parent minus it);
// each node takes its best weighted-gain split (or the level its best common split when
// Oblivious), subject to MinLeaf; rows are routed; leaves take the second-order value
// −G/(H+λ)·η. Refit and Corrective solve for all leaves jointly on groups of rows that
// share every leaf.
func Train(train, valid *Dataset, opt Options) (*model.Model, *Report, error) {
	start := time.Now()
	if err := train.Check(); err != nil {
		return nil, nil, fmt.Errorf("training set: %w", err)
	}
	nf := len(train.X)
	if valid != nil {
		if err := valid.Check(); err != nil {
			return nil, nil, fmt.Errorf("validation set: %w", err)
		}
		if len(valid.X) != nf {
			return nil, nil, fmt.Errorf("distill: validation set has %d features, training set %d", len(valid.X), nf)
		}
	}
	if err := opt.check(nf); err != nil {
		return nil, nil, err
	}
	if opt.Refit && valid == nil {
		if train.Rows() < 2 {
			return nil, nil, fmt.Errorf("distill: Refit with no validation set needs at least 2 training rows")
		}
		train, valid = train.Split(RefitHeldOut, opt.Seed)
	}
	t := newTrainer(train, opt)
	rep := &Report{Refit: opt.Refit, TrainRows: train.Rows(), HeldOutRows: valid.Rows(), HeldOutRMSE: math.NaN(), BoostHeldOutRMSE: math.NaN()}
	for f := range t.edges {
		rep.Thresholds = append(rep.Thresholds, len(t.edges[f]))
	}
	for round := range opt.Trees {
		tr, split := t.grow()
		if !split && len(t.trees) > 0 {
			break
		}
		t.trees = append(t.trees, tr)
		if opt.Corrective {
			t.apply(t.solve(1e-6))
		}
		if opt.Progress != nil {
			opt.Progress(round+1, opt.Trees)
		}
		if !split {
			break
		}
	}
	rep.Rounds = len(t.trees)
	if valid != nil {
		rep.BoostHeldOutRMSE = rmse(t.predict(valid.X, valid.Rows()), valid.Y)
		rep.HeldOutRMSE = rep.BoostHeldOutRMSE
	}
	if opt.Refit {
		if r, ok := t.refit(valid, rep.HeldOutRMSE); ok {
			rep.RefitApplied, rep.HeldOutRMSE = true, r
		}
	}
	rep.TrainRMSE = rmse(t.pred, t.y)
	m := &model.Model{
		Format: model.Format,
		Doc:    fmt.Sprintf("distilled by nicc: %d trees, depth ≤ %d, oblivious %v, learning rate %g, λ %g, min leaf %d, grid %v, refit %v", rep.Rounds, opt.Depth, opt.Oblivious, t.lr, t.lambda, t.minLeaf, opt.Grid != nil, rep.RefitApplied),
		Inputs: slices.Clone(train.Names),
		Ensemble: &model.Ensemble{
			Base:      t.base,
			Transform: model.TransformIdentity,
			Trees:     t.trees,
		},
	}
	if err := m.Validate(); err != nil {
		return nil, nil, fmt.Errorf("distill: internal error: trained model is invalid: %w", err)
	}
	rep.Elapsed = time.Since(start)
	return m, rep, nil
}

// check validates opt for nf features.
func (o *Options) check(nf int) error {
	switch {
	case o.Trees < 1:
		return fmt.Errorf("distill: Trees is %d, must be at least 1", o.Trees)
	case o.Depth < 1 || o.Depth > MaxDepth:
		return fmt.Errorf("distill: Depth is %d, must be in 1..%d", o.Depth, MaxDepth)
	case !(o.LearningRate >= 0) || math.IsInf(o.LearningRate, 0):
		return fmt.Errorf("distill: LearningRate is %v, must be positive (0 means %g)", o.LearningRate, DefaultLearningRate)
	case !(o.L2 >= 0) || math.IsInf(o.L2, 0):
		return fmt.Errorf("distill: L2 is %v, must be finite and ≥ 0", o.L2)
	case o.RefitPasses < 0:
		return fmt.Errorf("distill: RefitPasses is %d, must be ≥ 0", o.RefitPasses)
	case o.MinLeaf < 0:
		return fmt.Errorf("distill: MinLeaf is %d, must be ≥ 0", o.MinLeaf)
	case o.Bins != 0 && (o.Bins < 2 || o.Bins > DefaultBins):
		return fmt.Errorf("distill: Bins is %d, must be in 2..%d (0 means %d)", o.Bins, DefaultBins, DefaultBins)
	case o.FeatureWeights != nil && len(o.FeatureWeights) != nf:
		return fmt.Errorf("distill: %d feature weights for %d features", len(o.FeatureWeights), nf)
	case o.Grid != nil && len(o.Grid) != nf:
		return fmt.Errorf("distill: %d grid inputs for %d features", len(o.Grid), nf)
	}
	for f, w := range o.FeatureWeights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("distill: feature weight %d is %v, must be finite and ≥ 0", f, w)
		}
	}
	for f, g := range o.Grid {
		if g.Frac < 0 || g.Frac > 60 || g.Min > g.Max {
			return fmt.Errorf("distill: grid of feature %d (%s) is invalid: Frac %d, raw [%d, %d]", f, g.Name, g.Frac, g.Min, g.Max)
		}
	}
	return nil
}

// trainer is the state of one Train call. Trees are grown with local node indices (uint16).
type trainer struct {
	opt     Options
	nf, n   int
	threads int
	lr      float64
	lambda  float64
	minLeaf int
	minGain float64
	weights []float64

	edges   [][]float64 // per feature: ascending thresholds; bin b holds (edges[b-1], edges[b]]
	rowBins []uint8     // row-major: rowBins[r*nf+f] is row r's bin of feature f
	nb      []int       // per feature: len(edges)+1

	x          [][]float64
	y          []float64
	base       float64
	pred, grad []float64
	nid        []uint16     // per row: node of the tree being grown
	slot       []int16      // per row: histogram slot of its node at this level, or -1
	hist       [][]nodeStat // per feature: [slot*nb+bin] of this level
	parts      [histParts][]nodeStat
	prev       [][]nodeStat // per feature: the previous level's

	trees []model.Tree
	// For Refit: rows reaching the same leaf in every tree so far form a group (there are few:
	// a few thousand for 20 trees of depth 4 on millions of rows). gid is each row's group,
	// groupLeaf[tree][group] the group's leaf in each tree.
	gid       []int32
	groupLeaf [][]uint16
	ngroups   int
}

// chunkRows is the unit of row-parallel work; fixed, so that sums merged per chunk in order are
// the same for any number of threads.
const chunkRows = 1 << 15

func newTrainer(d *Dataset, opt Options) *trainer {
	t := &trainer{opt: opt, nf: len(d.X), n: d.Rows(), x: d.X, y: d.Y}
	t.threads = opt.Threads
	if t.threads <= 0 {
		t.threads = runtime.GOMAXPROCS(0)
	}
	t.lr = opt.LearningRate
	if t.lr == 0 {
		t.lr = DefaultLearningRate
	}
	t.lambda = opt.L2
	t.minLeaf = max(opt.MinLeaf, 1)
	t.weights = opt.FeatureWeights
	if t.weights == nil {
		t.weights = make([]float64, t.nf)
		for f := range t.weights {
			t.weights[f] = 1
		}
	}
	bins := opt.Bins
	if bins == 0 {
		bins = DefaultBins
	}

	t.edges = make([][]float64, t.nf)
	t.nb = make([]int, t.nf)
	t.forEach(t.nf, func(f int) {
		var g *quantize.Input
		if opt.Grid != nil {
			g = &opt.Grid[f]
		}
		t.edges[f] = featureEdges(d.X[f], g, bins)
		t.nb[f] = len(t.edges[f]) + 1
	})
	t.rowBins = make([]uint8, t.n*t.nf)
	t.forRows(t.n, func(lo, hi int) {
		for f, e := range t.edges {
			col := d.X[f]
			for r := lo; r < hi; r++ {
				t.rowBins[r*t.nf+f] = uint8(binOf(e, col[r]))
			}
		}
	})

	sums := t.sumRows(func(lo, hi int) [2]float64 {
		s := 0.0
		for _, v := range t.y[lo:hi] {
			s += v
		}
		return [2]float64{s}
	})
	t.base = sums[0] / float64(t.n)
	sse := t.sumRows(func(lo, hi int) [2]float64 {
		s := 0.0
		for _, v := range t.y[lo:hi] {
			s += (v - t.base) * (v - t.base)
		}
		return [2]float64{s}
	})
	// A split must lower the loss by more than rounding noise of the initial sum of squares.
	t.minGain = 1e-12 * sse[0]
	t.pred = make([]float64, t.n)
	t.grad = make([]float64, t.n)
	t.nid = make([]uint16, t.n)
	t.slot = make([]int16, t.n)
	for r := range t.pred {
		t.pred[r] = t.base
		t.grad[r] = t.base - t.y[r]
	}
	t.hist = make([][]nodeStat, t.nf)
	t.prev = make([][]nodeStat, t.nf)
	return t
}

// maxSample is the most rows per feature featureEdges sorts to place quantile edges.
var maxSample = 1 << 18

// featureEdges chooses the ascending thresholds of one feature (see Options.Grid and Bins).
func featureEdges(col []float64, g *quantize.Input, bins int) []float64 {
	// The sample sorts as integers (faster than floats): a grid feature's raw values, or an
	// order-preserving map of the float's bits.
	stride := max(1, len(col)/maxSample)
	s := make([]uint64, 0, len(col)/stride+1)
	for r := 0; r < len(col); r += stride {
		if g != nil {
			s = append(s, uint64(int64(g.Quantize(col[r]))-math.MinInt32))
		} else {
			s = append(s, floatKey(col[r]))
		}
	}
	radixSort(s)
	value := func(k uint64) float64 {
		if g != nil {
			return float64(int64(k) + math.MinInt32)
		}
		return keyFloat(k)
	}
	// Distinct values u and, for each, the number of samples below it.
	var u []float64
	var below []int
	for i, k := range s {
		if i == 0 || k != s[i-1] {
			u = append(u, value(k))
			below = append(below, i)
		}
	}
	// cut[i] (i ≥ 1) separates u[i-1] from u[i].
	var cuts []int
	if len(u) <= bins {
		for i := 1; i < len(u); i++ {
			cuts = append(cuts, i)
		}
	} else {
		m := len(s)
		last := 0
		for j := 1; j < bins; j++ {
			rank := j * m / bins
			// first distinct value with at least rank samples below it
			i := sort.SearchInts(below, rank)
			if i <= last || i >= len(u) {
				continue
			}
			cuts = append(cuts, i)
			last = i
		}
	}
	edges := make([]float64, 0, len(cuts))
	for _, i := range cuts {
		a, b := u[i-1], u[i]
		var t float64
		if g != nil {
			// raw values a < b: the grid midpoint in the middle of the gap
			k := int64(a) + (int64(b)-int64(a)-1)/2
			t = math.Ldexp(float64(2*k+1), -(g.Frac + 1))
		} else {
			t = a + (b-a)/2
			if !(t < b) {
				t = a
			}
		}
		if len(edges) == 0 || t > edges[len(edges)-1] {
			edges = append(edges, t)
		}
	}
	return edges
}

// floatKey maps finite floats to integers in the same order (−0 as +0).
func floatKey(v float64) uint64 {
	if v == 0 {
		v = 0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// keyFloat inverts floatKey.
func keyFloat(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// binOf is the number of edges below v: v's bin, the smallest b with v <= e[b] (len(e) if none).
func binOf(e []float64, v float64) int {
	// Branch-free lower bound: base ends at the last edge < v, if any.
	n := len(e)
	if n == 0 || v <= e[0] {
		return 0
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if e[base+half] < v {
			base += half
		}
		n -= half
	}
	return base + 1
}

// radixSort sorts s ascending (LSD, 16-bit digits, skipping digits all keys share).
func radixSort(s []uint64) {
	if len(s) < 256 {
		slices.Sort(s)
		return
	}
	var or, and uint64 = 0, ^uint64(0)
	for _, k := range s {
		or |= k
		and &= k
	}
	buf := make([]uint64, len(s))
	src, dst := s, buf
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		if (or^and)>>shift&0xffff == 0 {
			continue
		}
		clear(count[:])
		for _, k := range src {
			count[k>>shift&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			d := k >> shift & 0xffff
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// forEach runs fn(i) for i in [0, n) on t.threads goroutines.
func (t *trainer) forEach(n int, fn func(i int)) {
	w := min(t.threads, n)
	if w <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// forRows runs fn over fixed chunks of rows in parallel.
func (t *trainer) forRows(n int, fn func(lo, hi int)) {
	chunks := (n + chunkRows - 1) / chunkRows
	t.forEach(chunks, func(c int) { fn(c*chunkRows, min(n, (c+1)*chunkRows)) })
}

// sumRows sums fn over the row chunks, merging in chunk order (deterministic).
func (t *trainer) sumRows(fn func(lo, hi int) [2]float64) [2]float64 {
	chunks := (t.n + chunkRows - 1) / chunkRows
	part := make([][2]float64, chunks)
	t.forEach(chunks, func(c int) { part[c] = fn(c*chunkRows, min(t.n, (c+1)*chunkRows)) })
	var s [2]float64
	for _, p := range part {
		s[0] += p[0]
		s[1] += p[1]
	}
	return s
}

// nodeStat is a node's gradient sum and row count.
type nodeStat struct {
	g float64
	n int64
}

// score is G²/(H+λ), the loss reduction of a leaf with optimal value (0 when H+λ = 0).
func (t *trainer) score(g float64, n int64) float64 {
	d := float64(n) + t.lambda
	if d <= 0 {
		return 0
	}
	return g * g / d
}

// leafValue is −G/(H+λ)·η (0 when H+λ = 0).
func (t *trainer) leafValue(s nodeStat) float64 {
	d := float64(s.n) + t.lambda
	if d <= 0 {
		return 0
	}
	return -t.lr*s.g/d + 0 // + 0: no −0 leaves
}

// candidate is a split of one node: rows with bin ≤ bin go left.
type candidate struct {
	gain    float64
	feature int
	bin     int
	left    nodeStat
}

// grow builds one tree on the current residuals, adds it to t.pred, and reports whether it
// has any split.
func (t *trainer) grow() (model.Tree, bool) {
	// Rows start at the root with gradients pred − y: newTrainer, apply and the end of the
	// previous grow leave them so.
	nodes := []model.Node{{}}
	stats := []nodeStat{{}}
	open := []int{0}
	split := false
	var sib, par []int32 // per slot of the level: see buildHist
	var last *router     // the last level's splits, if it has any
	for depth := 0; depth < t.opt.Depth && len(open) > 0; depth++ {
		t.buildHist(len(open), sib, par)
		if depth == 0 {
			stats[0] = t.histTotal(0)
		}
		var cands []candidate // per open slot; gain 0 = no split
		if t.opt.Oblivious {
			cands = t.bestOblivious(open, stats)
		} else {
			cands = make([]candidate, len(open))
			t.forEach(len(open), func(s int) { cands[s] = t.bestSplit(s, stats[open[s]]) })
		}
		// Per node of this level: its split (bin, feature) or -1, and its children.
		route := make([]int32, len(nodes))
		feat := make([]int32, len(nodes))
		for i := range route {
			route[i] = -1
		}
		var next []int
		sib, par = sib[:0], par[:0]
		for s, nd := range open {
			c := cands[s]
			if c.gain <= 0 {
				continue
			}
			// Sum the smaller child; derive the larger.
			cs := int32(len(next))
			if 2*c.left.n <= stats[nd].n {
				sib, par = append(sib, -1, cs), append(par, -1, int32(s))
			} else {
				sib, par = append(sib, cs+1, -1), append(par, int32(s), -1)
			}
			split = true
			l, r := len(nodes), len(nodes)+1
			nodes[nd] = model.Node{Feature: c.feature, Threshold: t.edges[c.feature][c.bin], Cmp: model.CmpLE, Left: l, Right: r}
			ps := stats[nd]
			nodes = append(nodes, model.Node{}, model.Node{})
			stats = append(stats, c.left, nodeStat{ps.g - c.left.g, ps.n - c.left.n})
			route[nd], feat[nd] = int32(c.bin), int32(c.feature)
			next = append(next, l, r)
		}
		if len(next) == 0 {
			break
		}
		t.hist, t.prev = t.prev, t.hist
		// Route rows to the children. A row whose node did not split keeps it (a leaf) and
		// gets slot -1. Children's slots are 0, 1, ... in creation order, so the row's next
		// slot is its child's index minus the first child's, stored as −slot−2 when that
		// child's histogram is derived rather than summed (buildHist skips it).
		first := int32(next[0])
		left := make([]int32, len(route))
		for _, nd := range open {
			left[nd] = int32(nodes[nd].Left)
		}
		open = next
		if depth == t.opt.Depth-1 {
			// The last level: the final pass below routes rows to their leaves.
			last = &router{route: route, feat: feat, left: left, fromRoot: depth == 0}
			break
		}
		fromRoot := depth == 0
		t.forRows(t.n, func(lo, hi int) {
			nid, slot := t.nid[lo:hi], t.slot[lo:hi]
			for i, s := range slot {
				if s == -1 {
					continue
				}
				nd := nid[i]
				if fromRoot { // nid still holds the previous tree's leaves
					nd = 0
				}
				b := route[nd]
				if b < 0 {
					slot[i] = -1
					continue
				}
				// c = left, or right (left+1) when bin > b: branch-free, the two are
				// equally likely.
				c := left[nd] + int32(uint32(b-int32(t.rowBins[(lo+i)*t.nf+int(feat[nd])]))>>31)
				nid[i] = uint16(c)
				cs := c - first
				if sib[cs] >= 0 {
					cs = -cs - 2
				}
				slot[i] = int16(cs)
			}
		})
	}
	val := make([]float64, len(nodes))
	for i := range nodes {
		if nodes[i].Left == 0 {
			v := t.leafValue(stats[i])
			nodes[i] = model.Node{Leaf: true, Value: v}
			val[i] = v
		}
	}
	keep := split || len(t.trees) == 0 // Train drops a tree without splits unless it is the first
	if !keep {
		clear(val)
	}
	// Route rows by the last level's splits (if any) to their leaves (nid), add the tree to
	// pred, and set up the next round: gradients, rows at the root (slot 0; the first
	// routing ignores nid).
	atRoot := len(nodes) == 1
	nf := t.nf
	t.forRows(t.n, func(lo, hi int) {
		pred, y, grad, nid, slot := t.pred[lo:hi], t.y[lo:hi], t.grad[lo:hi], t.nid[lo:hi], t.slot[lo:hi]
		bins := t.rowBins[lo*nf : hi*nf]
		for i := range pred {
			l := int32(nid[i])
			switch {
			case atRoot:
				l = 0
			case last != nil && slot[i] != -1:
				if c := last.child(l, bins[i*nf:i*nf+nf]); c >= 0 {
					l = c
				}
			}
			nid[i] = uint16(l)
			p := pred[i] + val[l]
			pred[i] = p
			grad[i] = p - y[i]
			slot[i] = 0
		}
	})
	if (t.opt.Refit || t.opt.Corrective) && keep {
		t.refine(len(nodes))
	}
	return model.Tree{Nodes: nodes}, split
}

// router holds one level's splits, for routing rows to the next level.
type router struct {
	route, feat, left []int32 // per node: split bin (-1: no split), feature, left child
	fromRoot          bool    // the level is the root's: nid is not read
}

// child is the child of node nd (taken as the root when fromRoot) that a row with bins rb
// goes to, or -1 if nd did not split: left when bin ≤ split bin, else right (left+1).
func (rt *router) child(nd int32, rb []uint8) int32 {
	if rt.fromRoot {
		nd = 0
	}
	b := rt.route[nd]
	if b < 0 {
		return -1
	}
	return rt.left[nd] + int32(uint32(b-int32(rb[rt.feat[nd]]))>>31)
}

// histParts is the fixed number of row ranges histograms are summed over separately (in
// parallel) and then added in order: fixed, so the sums do not depend on Threads.
const histParts = 2

// buildHist fills t.hist[f][slot*nb+bin] for every feature. Each of histParts row ranges is
// summed in row order into its own histograms, for all features in one pass (rows with
// t.slot < 0 are skipped: settled, or in a slot that is derived); the parts are then added.
// A slot s with sib[s] ≥ 0 is not summed but derived, afterwards, as its parent's histogram
// (t.prev, slot par[s]) minus its sibling's (the subtraction trick: only the smaller child
// of each split is summed).
func (t *trainer) buildHist(slots int, sib, par []int32) {
	nf := t.nf
	off := make([]int, nf+1) // feature f's histogram is [off[f]*slots, off[f+1]*slots) of a part
	for f := range nf {
		off[f+1] = off[f] + t.nb[f]
	}
	size := off[nf] * slots
	for p := range t.parts {
		if cap(t.parts[p]) < size {
			t.parts[p] = make([]nodeStat, size)
		}
		t.parts[p] = t.parts[p][:size]
	}
	t.forEach(histParts, func(p int) {
		h := t.parts[p]
		clear(h)
		lo, hi := p*t.n/histParts, (p+1)*t.n/histParts
		slot, grad, bins := t.slot[lo:hi], t.grad[lo:hi], t.rowBins[lo*nf:hi*nf]
		base := make([]int, nf) // per feature: its offset in h
		for f := range nf {
			base[f] = off[f] * slots
		}
		for i, s := range slot {
			if s < 0 {
				continue
			}
			g := grad[i]
			rb := bins[i*nf : i*nf+nf]
			for f, b := range rb {
				e := &h[base[f]+int(s)*t.nb[f]+int(b)]
				e.g += g
				e.n++
			}
		}
	})
	t.forEach(nf, func(f int) {
		nb := t.nb[f]
		fs := nb * slots
		if cap(t.hist[f]) < fs {
			t.hist[f] = make([]nodeStat, fs)
		}
		h := t.hist[f][:fs]
		for s := range slots {
			if sib != nil && sib[s] >= 0 {
				continue
			}
			dst := h[s*nb : (s+1)*nb]
			copy(dst, t.parts[0][off[f]*slots+s*nb:])
			for p := 1; p < histParts; p++ {
				src := t.parts[p][off[f]*slots+s*nb:]
				for b := range dst {
					dst[b].g += src[b].g
					dst[b].n += src[b].n
				}
			}
		}
		for s := range slots {
			if sib == nil || sib[s] < 0 {
				continue
			}
			dst, p, o := h[s*nb:(s+1)*nb], t.prev[f][int(par[s])*nb:], h[int(sib[s])*nb:]
			for b := range dst {
				dst[b] = nodeStat{p[b].g - o[b].g, p[b].n - o[b].n}
			}
		}
		t.hist[f] = h
	})
}

// histTotal is the sum of a slot's histogram (over feature 0's bins).
func (t *trainer) histTotal(s int) nodeStat {
	nb := t.nb[0]
	var st nodeStat
	for _, e := range t.hist[0][s*nb : (s+1)*nb] {
		st.g += e.g
		st.n += e.n
	}
	return st
}

// bestSplit is the best weighted-gain split of slot s with totals ps (gain 0: none).
func (t *trainer) bestSplit(s int, ps nodeStat) candidate {
	best := candidate{}
	if ps.n < int64(2*t.minLeaf) {
		return best
	}
	parent := t.score(ps.g, ps.n)
	ml := int64(t.minLeaf)
	for f := range t.nf {
		w := t.weights[f]
		if w == 0 {
			continue
		}
		nb := t.nb[f]
		h := t.hist[f][s*nb : (s+1)*nb]
		var gl float64
		var nl int64
		for b := 0; b < nb-1; b++ {
			gl += h[b].g
			nl += h[b].n
			if nl < ml {
				continue
			}
			nr := ps.n - nl
			if nr < ml {
				break
			}
			gain := w * (t.score(gl, nl) + t.score(ps.g-gl, nr) - parent)
			if gain > best.gain && gain > t.minGain {
				best = candidate{gain: gain, feature: f, bin: b, left: nodeStat{gl, nl}}
			}
		}
	}
	return best
}

// bestOblivious picks one (feature, bin) for every open node, maximising the level's total
// weighted gain; every node gets that split (or none, if no split gains).
func (t *trainer) bestOblivious(open []int, stats []nodeStat) []candidate {
	type fbest struct {
		gain float64
		bin  int
	}
	per := make([]fbest, t.nf)
	ml := int64(t.minLeaf)
	t.forEach(t.nf, func(f int) {
		w := t.weights[f]
		per[f] = fbest{bin: -1}
		if w == 0 {
			return
		}
		nb := t.nb[f]
		total := make([]float64, nb-1)
		ok := make([]bool, nb-1)
		for b := range ok {
			ok[b] = true
		}
		for s, nd := range open {
			ps := stats[nd]
			parent := t.score(ps.g, ps.n)
			enforce := ps.n >= 2*ml
			h := t.hist[f][s*nb : (s+1)*nb]
			var gl float64
			var nl int64
			for b := 0; b < nb-1; b++ {
				gl += h[b].g
				nl += h[b].n
				if enforce && (nl < ml || ps.n-nl < ml) {
					ok[b] = false
				}
				total[b] += t.score(gl, nl) + t.score(ps.g-gl, ps.n-nl) - parent
			}
		}
		for b := range total {
			g := w * total[b]
			if ok[b] && g > per[f].gain && g > t.minGain {
				per[f] = fbest{g, b}
			}
		}
	})
	bf, bb, bg := -1, -1, 0.0
	for f, p := range per {
		if p.bin >= 0 && p.gain > bg {
			bf, bb, bg = f, p.bin, p.gain
		}
	}
	cands := make([]candidate, len(open))
	if bf < 0 {
		return cands
	}
	nb := t.nb[bf]
	for s := range open {
		var gl float64
		var nl int64
		for b := 0; b <= bb; b++ {
			gl += t.hist[bf][s*nb+b].g
			nl += t.hist[bf][s*nb+b].n
		}
		cands[s] = candidate{gain: bg, feature: bf, bin: bb, left: nodeStat{gl, nl}}
	}
	return cands
}

// predict is the ensemble's prediction for n rows of the column-major x.
func (t *trainer) predict(x [][]float64, n int) []float64 {
	return predict(t.base, t.trees, x, n, t)
}

// predict is base + Σ trees at n rows of the column-major x, run on t's threads.
func predict(base float64, trees []model.Tree, x [][]float64, n int, t *trainer) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = base
	}
	for i := range trees {
		t.addTree(&trees[i], x, p)
	}
	return p
}

// addTree adds tree tr's value at every row of the column-major x to pred.
func (t *trainer) addTree(tr *model.Tree, x [][]float64, pred []float64) {
	nodes := tr.Nodes
	t.forRows(len(pred), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			n := &nodes[0]
			for !n.Leaf {
				if x[n.Feature][r] <= n.Threshold {
					n = &nodes[n.Left]
				} else {
					n = &nodes[n.Right]
				}
			}
			pred[r] += n.Value
		}
	})
}

// refine splits the row groups by the leaves (t.nid, nodes tree nodes) of the tree just grown.
func (t *trainer) refine(nodes int) {
	if t.gid == nil {
		t.gid = make([]int32, t.n)
		t.ngroups = 1
	}
	old := t.ngroups
	var from []int32 // per new group: its old group
	var leafOf []uint16
	newGroup := func(g int32, l uint16) int32 {
		from = append(from, g)
		leafOf = append(leafOf, l)
		return int32(len(from) - 1)
	}
	if old*nodes <= 1<<24 {
		table := make([]int32, old*nodes)
		for i := range table {
			table[i] = -1
		}
		for r, g := range t.gid {
			l := t.nid[r]
			k := int(g)*nodes + int(l)
			if table[k] < 0 {
				table[k] = newGroup(g, l)
			}
			t.gid[r] = table[k]
		}
	} else {
		table := make(map[uint64]int32)
		for r, g := range t.gid {
			l := t.nid[r]
			k := uint64(g)<<16 | uint64(l)
			id, ok := table[k]
			if !ok {
				id = newGroup(g, l)
				table[k] = id
			}
			t.gid[r] = id
		}
	}
	for ti, gl := range t.groupLeaf {
		ngl := make([]uint16, len(from))
		for g, f := range from {
			ngl[g] = gl[f]
		}
		t.groupLeaf[ti] = ngl
	}
	t.groupLeaf = append(t.groupLeaf, leafOf)
	t.ngroups = len(from)
}

// refit jointly refits every leaf value and the base by coordinate descent on the training
// set, and keeps the result if the RMSE on valid falls below before. Rows in one group are
// identical to the ensemble, so the descent runs on the groups' counts and target sums.
func (t *trainer) refit(valid *Dataset, before float64) (float64, bool) {
	if len(t.groupLeaf) != len(t.trees) {
		return 0, false
	}
	base, trees, gp := t.solve(1e-10)
	// The refit model, checked on valid.
	after := rmse(predict(base, trees, valid.X, valid.Rows(), t), valid.Y)
	if !(after < before) {
		return 0, false
	}
	t.apply(base, trees, gp)
	return after, true
}

// apply makes base and trees the ensemble, gp being its prediction per row group.
func (t *trainer) apply(base float64, trees []model.Tree, gp []float64) {
	t.base, t.trees = base, trees
	t.forRows(t.n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t.pred[r] = gp[t.gid[r]]
			t.grad[r] = t.pred[r] - t.y[r]
		}
	})
}

// solve is the refit: the jointly refit base and trees, and the prediction per row group. It
// stops when a pass lowers the training loss by less than a relative tol.
func (t *trainer) solve(tol float64) (float64, []model.Tree, []float64) {
	G := t.ngroups
	cnt, sy, sy2 := make([]float64, G), make([]float64, G), make([]float64, G)
	for r, g := range t.gid {
		cnt[g]++
		sy[g] += t.y[r]
		sy2[g] += t.y[r] * t.y[r]
	}
	base := t.base
	vals := make([][]float64, len(t.trees))
	gp := make([]float64, G)
	for g := range gp {
		gp[g] = base
	}
	for ti, tr := range t.trees {
		vals[ti] = make([]float64, len(tr.Nodes))
		for i, n := range tr.Nodes {
			vals[ti][i] = n.Value
		}
		for g, l := range t.groupLeaf[ti] {
			gp[g] += vals[ti][l]
		}
	}
	if b, ok := t.exactSolve(cnt, sy, vals); ok {
		base = b
		for g := range gp {
			gp[g] = base
		}
		for ti := range t.trees {
			for g, l := range t.groupLeaf[ti] {
				gp[g] += vals[ti][l]
			}
		}
		return base, t.withValues(vals), gp
	}
	sse := func() float64 {
		s := 0.0
		for g := range gp {
			s += sy2[g] - 2*gp[g]*sy[g] + cnt[g]*gp[g]*gp[g]
		}
		return s
	}
	passes := t.opt.RefitPasses
	if passes == 0 {
		passes = DefaultRefitPasses
	}
	prev := sse()
	for range passes {
		for ti := range t.trees {
			v, gl := vals[ti], t.groupLeaf[ti]
			s := make([]float64, len(v))
			c := make([]float64, len(v))
			for g, l := range gl {
				s[l] += sy[g] - cnt[g]*(gp[g]-v[l])
				c[l] += cnt[g]
			}
			delta := make([]float64, len(v))
			for l := range v {
				if d := c[l] + t.lambda; c[l] > 0 && d > 0 {
					nv := s[l] / d
					delta[l] = nv - v[l]
					v[l] = nv
				}
			}
			for g, l := range gl {
				gp[g] += delta[l]
			}
		}
		s, c := 0.0, 0.0
		for g := range gp {
			s += sy[g] - cnt[g]*gp[g]
			c += cnt[g]
		}
		db := s / c
		base += db
		for g := range gp {
			gp[g] += db
		}
		cur := sse()
		if !(prev-cur > tol*prev) {
			break
		}
		prev = cur
	}
	return base, t.withValues(vals), gp
}

// withValues is a copy of t.trees with leaf values vals[tree][node].
func (t *trainer) withValues(vals [][]float64) []model.Tree {
	trees := make([]model.Tree, len(t.trees))
	for ti, tr := range t.trees {
		nodes := slices.Clone(tr.Nodes)
		for i := range nodes {
			if nodes[i].Leaf {
				nodes[i].Value = vals[ti][i]
			}
		}
		trees[ti] = model.Tree{Nodes: nodes}
	}
	return trees
}

// exactRefit enables exactSolve (tests compare it with coordinate descent).
var exactRefit = true

// maxExact is the most unknowns (leaves + 1) exactSolve takes on.
const maxExact = 640

// exactSolve solves the refit's ridge least-squares problem exactly: the normal equations over
// the unknowns (base, every leaf), built from the groups' counts and target sums, by Cholesky.
// It writes the leaves into vals and returns the base; ok is false (vals untouched) when there
// are too many unknowns or the system is not positive definite (λ = 0 makes it singular).
func (t *trainer) exactSolve(cnt, sy []float64, vals [][]float64) (float64, bool) {
	idx := make([][]int, len(t.trees)) // per tree, per node: unknown index (leaves)
	L := 1
	for ti, tr := range t.trees {
		idx[ti] = make([]int, len(tr.Nodes))
		for i, n := range tr.Nodes {
			if n.Leaf {
				idx[ti][i] = L
				L++
			}
		}
	}
	if L > maxExact || t.lambda <= 0 || !exactRefit {
		return 0, false
	}
	a := make([]float64, L*L)
	rhs := make([]float64, L)
	vars := make([]int, len(t.trees)+1)
	for g := range cnt {
		vars[0] = 0
		for ti := range t.trees {
			vars[ti+1] = idx[ti][t.groupLeaf[ti][g]]
		}
		c := cnt[g]
		for _, i := range vars {
			rhs[i] += sy[g]
			row := a[i*L:]
			for _, j := range vars {
				row[j] += c
			}
		}
	}
	for i := 1; i < L; i++ {
		a[i*L+i] += t.lambda
	}
	// Cholesky a = R Rᵀ in the lower triangle.
	for j := range L {
		d := a[j*L+j]
		for k := range j {
			d -= a[j*L+k] * a[j*L+k]
		}
		if !(d > 0) {
			return 0, false
		}
		d = math.Sqrt(d)
		a[j*L+j] = d
		for i := j + 1; i < L; i++ {
			v := a[i*L+j]
			ri, rj := a[i*L:i*L+j], a[j*L:j*L+j]
			for k := range ri {
				v -= ri[k] * rj[k]
			}
			a[i*L+j] = v / d
		}
	}
	x := rhs
	for i := range L { // R y = rhs
		v := x[i]
		for k := range i {
			v -= a[i*L+k] * x[k]
		}
		x[i] = v / a[i*L+i]
	}
	for i := L - 1; i >= 0; i-- { // Rᵀ x = y
		v := x[i]
		for k := i + 1; k < L; k++ {
			v -= a[k*L+i] * x[k]
		}
		x[i] = v / a[i*L+i]
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
	}
	for ti := range t.trees {
		for i, k := range idx[ti] {
			if k > 0 {
				vals[ti][i] = x[k]
			}
		}
	}
	return x[0], true
}

// rmse is the root mean squared difference of p and y.
func rmse(p, y []float64) float64 {
	if len(y) == 0 {
		return math.NaN()
	}
	s := 0.0
	for i := range y {
		d := p[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(y)))
}
