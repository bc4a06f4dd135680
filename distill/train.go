package distill

import (
	"fmt"
	"math"
	"slices"
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
// Bins) and every row's bin index computed once (row-major bytes). Trees grow level by
// level: per-node gradient histograms are summed for all features over each of two fixed row
// halves (in parallel, each in row order, then added in order, so results do not depend on
// Threads), only for the smaller child of each split (the larger is its parent minus it);
// each node takes its best weighted-gain split (or the level its best common split when
// Oblivious), subject to MinLeaf; one pass per half in row order moves every row to its
// child (each row's node is kept, not lists of each node's rows) and lists the summed
// children's rows, whose histograms a second pass sums (down to the last level); leaves take
// the second-order value −G/(H+λ)·η. One pass per half then moves the rows down the last level,
// adds the tree to the predictions, sums the next root's gradients (its counts never change)
// and splits the refit's row groups. Refit and Corrective solve for all leaves jointly on
// groups of rows that share every leaf.
//
// Train hands these jobs' data from one to the next: startBoost gives the boostState (the
// ensemble, the gradients and each row's node), Options.resolve the config and binData the
// binned rows (both read-only); boost runs the rounds, each a grow: a histBuilder (histograms,
// and the level passes that move the rows) serves growLevels, whose grownTree finish takes as a leafPass to move
// the rows to their leaves and split the rowGroups; solve refits on those groups and returns
// a refitted ensemble, which boostState.apply takes.
func Train(train, valid *Dataset, opt Options) (*model.Model, *Report, error) {
	start := time.Now()
	// The training set's values are checked for NaN and infinities by the trainer's passes
	// over them (binData, startBoost), not by a pass of their own.
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
	pl := newPool(opt.Threads)
	st, sse, finite := startBoost(train.Y, pl)
	cfg := opt.resolve(nf, sse)
	data, nonFinite := binData(train.X, train.Rows(), opt.Grid, cfg.bins, pl)
	if nonFinite || !finite {
		if err := train.Check(); err != nil {
			return nil, nil, fmt.Errorf("training set: %w", err)
		}
	}
	rep := &Report{Refit: opt.Refit, TrainRows: train.Rows(), HeldOutRows: valid.Rows(), HeldOutRMSE: math.NaN(), BoostHeldOutRMSE: math.NaN()}
	for f := range data.edges {
		rep.Thresholds = append(rep.Thresholds, len(data.edges[f]))
	}
	grp := boost(pl, &cfg, data, st, train.Y, opt.Progress)
	rep.Rounds, rep.LearningRate = len(st.trees), cfg.lr
	var validLeaves [][]uint16
	if valid != nil {
		validLeaves = leavesAt(pl, st.trees, valid.X, valid.Rows())
		rep.BoostHeldOutRMSE = rmse(predict(pl, st.base, st.trees, validLeaves, valid.Rows()), valid.Y)
		rep.HeldOutRMSE = rep.BoostHeldOutRMSE
	}
	// The refit is kept if it lowers the held-out RMSE. Rows in one group are identical to the
	// ensemble, so it is solved on the groups' counts and target sums.
	if cfg.refit && len(grp.splits) == len(st.trees) {
		r := solve(pl, &cfg, grp, train.Y, st.base, st.trees, 1e-10)
		if after := rmse(predict(pl, r.base, r.trees, validLeaves, valid.Rows()), valid.Y); after < rep.HeldOutRMSE {
			st.apply(pl, r, grp.gid, train.Y)
			rep.RefitApplied, rep.HeldOutRMSE = true, after
		}
	}
	sq := pl.sumRows(data.n, func(lo, hi int) [2]float64 {
		s := 0.0
		for _, g := range st.grad[lo:hi] {
			s += g * g
		}
		return [2]float64{s}
	})
	rep.TrainRMSE = math.Sqrt(sq[0] / float64(data.n))
	m := &model.Model{
		Version: model.NativeVersion,
		Doc:     fmt.Sprintf("distilled by nicc: %d trees, depth ≤ %d, oblivious %v, learning rate %g, λ %g, min leaf %d, grid %v, refit %v", rep.Rounds, opt.Depth, opt.Oblivious, cfg.lr, cfg.lambda, cfg.minLeaf, opt.Grid != nil, rep.RefitApplied),
		Inputs:  slices.Clone(train.Names),
		Ensemble: &model.Ensemble{
			Base:      st.base,
			Transform: model.TransformIdentity,
			Trees:     st.trees,
		},
	}
	if err := m.Validate(); err != nil {
		return nil, nil, fmt.Errorf("distill: internal error: trained model is invalid: %w", err)
	}
	rep.Elapsed = time.Since(start)
	return m, rep, nil
}

// boost runs the boosting rounds on st, y being the targets: at most c.trees trees, each
// grown on the residuals (with c.corrective, then all refit jointly); it stops early at a
// tree without a split (keeping the first). It returns the refit's row groups (nil without
// c.refit or c.corrective).
func boost(pl pool, c *config, d *binned, st *boostState, y []float64, progress func(round, total int)) *rowGroups {
	hb := newHistBuilder(d.n, d.nf)
	var grp *rowGroups
	if c.refit || c.corrective {
		grp = newRowGroups(d.n)
	}
	for round := range c.trees {
		tr, split := grow(pl, c, d, hb, st, grp, round == c.trees-1)
		if !split && len(st.trees) > 0 {
			break
		}
		st.trees = append(st.trees, tr)
		if c.corrective {
			st.apply(pl, solve(pl, c, grp, y, st.base, st.trees, 1e-6), grp.gid, y)
			hb.markRoot(false) // the gradients changed
		}
		if progress != nil {
			progress(round+1, c.trees)
		}
		if !split {
			break
		}
	}
	return grp
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

// config is the run's Options resolved, defaults filled in: read-only.
type config struct {
	trees, depth      int
	oblivious         bool
	refit, corrective bool
	bins              int
	lr, lambda        float64
	minLeaf           int
	minGain           float64   // the least gain of a split: rounding noise of the initial loss
	weights           []float64 // per feature (Options.FeatureWeights, or all 1)
	refitPasses       int
}

// resolve is o for nf features with its defaults filled in; sse is the targets' initial sum
// of squares (startBoost), whose rounding noise a split must gain more than.
func (o *Options) resolve(nf int, sse float64) config {
	c := config{trees: o.Trees, depth: o.Depth, oblivious: o.Oblivious, refit: o.Refit, corrective: o.Corrective, minGain: 1e-12 * sse, bins: o.Bins, lr: o.LearningRate, lambda: o.L2, minLeaf: max(o.MinLeaf, 1), weights: o.FeatureWeights, refitPasses: o.RefitPasses}
	if c.lr == 0 {
		c.lr = DefaultLearningRate
	}
	if c.weights == nil {
		c.weights = make([]float64, nf)
		for f := range c.weights {
			c.weights[f] = 1
		}
	}
	if c.bins == 0 {
		c.bins = DefaultBins
	}
	if c.refitPasses == 0 {
		c.refitPasses = DefaultRefitPasses
	}
	return c
}

// boostState is what the boosting rounds change: the ensemble so far, and every row's
// gradient and node. Between rounds every row is at the root.
type boostState struct {
	base  float64
	trees []model.Tree
	grad  []float64 // per row: prediction − y
	nid   []uint16  // per row: its node in the tree being grown, on the level reached (its leaf if above); partition and finish move it on
}

// startBoost is the state before the first round for the targets y: base mean(y), no trees.
// It also returns the initial loss Σ(y − base)² and whether Σy is finite.
func startBoost(y []float64, pl pool) (st *boostState, sse float64, finite bool) {
	n := len(y)
	sums := pl.sumRows(n, func(lo, hi int) [2]float64 {
		s := 0.0
		for _, v := range y[lo:hi] {
			s += v
		}
		return [2]float64{s}
	})
	st = &boostState{base: sums[0] / float64(n)}
	finite = !math.IsNaN(sums[0]) && !math.IsInf(sums[0], 0)
	base := st.base
	sq := pl.sumRows(n, func(lo, hi int) [2]float64 {
		s := 0.0
		for _, v := range y[lo:hi] {
			s += (v - base) * (v - base)
		}
		return [2]float64{s}
	})
	st.grad = make([]float64, n)
	st.nid = make([]uint16, n)
	grad := st.grad
	pl.forRows(n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			grad[r] = base - y[r]
		}
	})
	return st, sq[0], finite
}

// apply makes the refit rf the ensemble: every row's gradient becomes its group's (gid) new
// prediction − y.
func (st *boostState) apply(pl pool, rf refitted, gid []int32, y []float64) {
	st.base, st.trees = rf.base, rf.trees
	grad, gp := st.grad, rf.gp
	pl.forRows(len(grad), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			grad[r] = gp[gid[r]] - y[r]
		}
	})
}
