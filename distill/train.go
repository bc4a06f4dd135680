package distill

import (
	"fmt"
	"math"
	"runtime"
	"slices"
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
	// LearningRate is the shrinkage used (Options.LearningRate, or its default).
	LearningRate float64
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
// Bins) and every row's bin index computed once (row-major bytes, and a column-major copy
// for partitioning). Trees grow level by level: per-node gradient histograms are summed for
// all features over each of two fixed row halves (in parallel, each in row order, then added
// in order, so results do not depend on Threads), only for the smaller child of each split
// (the larger is its parent minus it); each node takes its best weighted-gain split (or the
// level its best common split when Oblivious), subject to MinLeaf; each half's rows are
// partitioned stably among the nodes (down to the last level); leaves take the
// second-order value −G/(H+λ)·η. One pass per half then moves the rows down the last level,
// adds the tree to the predictions, sums the next root's gradients (its counts never change)
// and splits the refit's row groups. Refit and Corrective solve for all leaves jointly on
// groups of rows that share every leaf.
func Train(train, valid *Dataset, opt Options) (*model.Model, *Report, error) {
	start := time.Now()
	// The training set's values are checked for NaN and infinities by the trainer's passes
	// over them (newTrainer), not by a pass of their own.
	if err := train.checkShape(); err != nil {
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
		if err := train.Check(); err != nil { // before Split renumbers the rows
			return nil, nil, fmt.Errorf("training set: %w", err)
		}
		train, valid = train.Split(RefitHeldOut, opt.Seed)
	}
	t := newTrainer(train, opt)
	if t.nonFinite {
		if err := train.Check(); err != nil {
			return nil, nil, fmt.Errorf("training set: %w", err)
		}
	}
	rep := &Report{Refit: opt.Refit, TrainRows: train.Rows(), HeldOutRows: valid.Rows(), HeldOutRMSE: math.NaN(), BoostHeldOutRMSE: math.NaN()}
	for f := range t.edges {
		rep.Thresholds = append(rep.Thresholds, len(t.edges[f]))
	}
	for round := range opt.Trees {
		t.lastRound = round == opt.Trees-1
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
	rep.Rounds, rep.LearningRate = len(t.trees), t.lr
	var validLeaves [][]uint16
	if valid != nil {
		validLeaves = t.leavesAt(t.trees, valid.X, valid.Rows())
		rep.BoostHeldOutRMSE = rmse(t.predict(t.base, t.trees, validLeaves, valid.Rows()), valid.Y)
		rep.HeldOutRMSE = rep.BoostHeldOutRMSE
	}
	if opt.Refit {
		if r, ok := t.refit(valid, validLeaves, rep.HeldOutRMSE); ok {
			rep.RefitApplied, rep.HeldOutRMSE = true, r
		}
	}
	sq := t.sumRows(func(lo, hi int) [2]float64 {
		s := 0.0
		for _, g := range t.grad[lo:hi] {
			s += g * g
		}
		return [2]float64{s}
	})
	rep.TrainRMSE = math.Sqrt(sq[0] / float64(t.n))
	m := &model.Model{
		Version: model.NativeVersion,
		Doc:     fmt.Sprintf("distilled by nicc: %d trees, depth ≤ %d, oblivious %v, learning rate %g, λ %g, min leaf %d, grid %v, refit %v", rep.Rounds, opt.Depth, opt.Oblivious, t.lr, t.lambda, t.minLeaf, opt.Grid != nil, rep.RefitApplied),
		Inputs:  slices.Clone(train.Names),
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
	colBins [][]uint8   // column-major copy: partition reads one feature, whose column stays in the cache
	nb      []int       // per feature: len(edges)+1

	x      [][]float64
	y      []float64
	base   float64
	grad   []float64 // per row: prediction − y
	nid    []uint16  // per row: its node on the last level of the tree being grown (its leaf if above); finish moves it on
	halves [histParts]half
	// hist and prev are this level's and the previous level's histograms, parts the halves'
	// sums: slot s, feature f, bin b at (s·nf+f)·histBins+b.
	hist, prev []nodeStat
	parts      [histParts][]nodeStat
	rootSummed bool // parts hold the root's sums for the current gradients
	nonFinite  bool // newTrainer met a NaN or infinity (or the targets' sum overflowed)
	lastRound  bool // the tree being grown is the last boosting round's
	// rootCounts are the halves' root histograms with gradient sums 0: no tree changes a count.
	rootCounts [histParts][]nodeStat

	trees []model.Tree
	// For Refit: rows reaching the same leaf in every tree so far form a group (there are few:
	// a few thousand for 20 trees of depth 4 on millions of rows). gid is each row's group,
	// splits how each tree split them, groupLeaf[tree][group] the group's leaf in each tree
	// (groupLeaves).
	gid       []int32
	splits    []groupSplit
	groupLeaf [][]uint16
	ngroups   int
	// renumber's key ranks: the keys met, as a bitset, and per word the keys met below it
	rankBits []uint64
	rankBase []int32
	gidKeyed bool // gid holds renumber's keys, not groups yet
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
	binners := make([]*binner, t.nf)
	for f, e := range t.edges {
		binners[f] = newBinner(e)
	}
	t.rowBins = make([]uint8, t.n*t.nf)
	t.colBins = make([][]uint8, t.nf)
	for f := range t.colBins {
		t.colBins[f] = make([]uint8, t.n)
	}
	var nonFinite atomic.Bool
	t.forRows(t.n, func(lo, hi int) {
		for f, bn := range binners {
			col, cb := d.X[f], t.colBins[f]
			for r := lo; r < hi; r++ {
				k, ok := bn.quick(col[r]) // ok only for a finite value
				if !ok {
					if math.IsNaN(col[r]) || math.IsInf(col[r], 0) {
						nonFinite.Store(true)
					}
					k = bn.search(col[r])
				}
				t.rowBins[r*t.nf+f] = uint8(k)
				cb[r] = uint8(k)
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
	t.nonFinite = nonFinite.Load() || math.IsNaN(sums[0]) || math.IsInf(sums[0], 0)
	sse := t.sumRows(func(lo, hi int) [2]float64 {
		s := 0.0
		for _, v := range t.y[lo:hi] {
			s += (v - t.base) * (v - t.base)
		}
		return [2]float64{s}
	})
	// A split must lower the loss by more than rounding noise of the initial sum of squares.
	t.minGain = 1e-12 * sse[0]
	t.grad = make([]float64, t.n)
	t.nid = make([]uint16, t.n)
	t.forEach(histParts, func(p int) { // each thread clears and fills its own
		hf := &t.halves[p]
		hf.lo, hf.hi = p*t.n/histParts, (p+1)*t.n/histParts
		hf.rows = make([]int32, hf.hi-hf.lo)
		for i := range hf.rows {
			hf.rows[i] = int32(hf.lo + i)
		}
		hf.idx = make([]int32, hf.hi-hf.lo)
		hf.tmp = make([]int32, hf.hi-hf.lo)
		hf.atRoot = true
	})
	t.forRows(t.n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t.grad[r] = t.base - t.y[r]
		}
	})
	return t
}

// histParts is the fixed number of row ranges (halves) histograms are summed over separately.
const histParts = 2

// histBins is the number of bins every histogram has room for (DefaultBins, the most).
const histBins = DefaultBins

// maxFeaturesFast is the most features whose histograms are addressed through a fixed array
// (no bounds checks in the innermost loop).
const maxFeaturesFast = 16

// half is one of the histParts fixed row ranges whose histograms are summed separately (in
// parallel, each in row order) and then added in order: fixed, so the sums do not depend on
// Threads. Rows are moved through a tree by stable partitions of idx.
type half struct {
	lo, hi int
	rows   []int32  // lo..hi-1
	idx    []int32  // below the root: the rows, grouped by open node
	tmp    []int32  // partition scratch
	atRoot bool     // the rows are at the root: span indexes rows, not idx
	span   [][2]int // per open slot of the level: its rows, idx[span[0]:span[1]]
	// For the fused group split (trainer.finish): the keys met, as a bitset.
	seen []uint64
}
