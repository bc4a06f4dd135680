package quantize

import (
	"fmt"
	"math"
	"slices"
)

// The rank form of a tree ensemble (codegen.FormRank) computes, per feature f, its rank: how
// many of the thresholds of f the input exceeds. Within one cell of ranks every split of
// every tree has a constant outcome (each of its thresholds is one of the ones counted), so a
// tree's leaf, and the sum of the leaves of a group of trees, is a function of the ranks of
// the features the group splits on. Each group's sum is a table indexed by a mixed-radix
// number of those (group-local) ranks; the tables hold exact accumulator values, so the
// firmware adds the groups' entries to Base + Addend and rounds once, as Eval does.
//
// A rank is found from a bucket: b = min((x >> Shift) − Origin, Buckets − 1), the difference
// taken in int64 and compared as uint64, Origin = Min >> Shift (an input below Min gives a
// negative difference, a large uint64, and is clamped: safe, though outside the ranges
// nothing is exact), so bucket b holds the inputs in [(Origin + b) << Shift, (Origin + b + 1)
// << Shift), the last one every larger input; the thresholds that can lie inside one bucket
// are at most Fixups, and a bucket holds them (padded with
// INT32_MAX, which no x exceeds) and the Fixups + 1 lane words of the ranks its inputs can
// have. A lane word packs, for every group, the rank's part of that group's table index in
// its own 16-bit lane; the words of all features add without carries between lanes, since
// each lane's sum is a table index below 2^16. The first feature's words also carry each
// group's table offset: the groups' tables are one array.

// RankLanes is the most groups one lane word holds; RankMaxEntries the most table entries.
const (
	RankLanes      = 4
	RankLaneBits   = 16
	RankMaxEntries = 1 << RankLaneBits
	// RankMaxBuckets is the most buckets one feature's table may have.
	RankMaxBuckets = 1 << 16
)

// RankPlan is how to lay a rank form out: the trees of each group (every tree in exactly one)
// and each feature's bucket shift (ignored for a feature no tree splits on).
type RankPlan struct {
	Groups [][]int `json:"groups"`
	Shift  []int   `json:"shift"`
}

// RankFeature is one feature's bucket table.
type RankFeature struct {
	Feature int
	Origin  int32 // Min >> Shift: bucket 0 holds x >> Shift == Origin
	Shift   int
	Fixups  int
	// Thresholds[b] are bucket b's Fixups thresholds, ascending, padded with INT32_MAX;
	// Words[b] the Fixups + 1 lane words for 0..Fixups of them exceeded.
	Thresholds [][]int32
	Words      [][]uint64
}

// RankLayout is a rank form: the features' bucket tables, the groups' tables (one array,
// Sums), and the proven accumulator.
type RankLayout struct {
	Plan     RankPlan // what it was built from
	Groups   [][]int
	Features []RankFeature
	// Sums holds every group's table, group after group; Offsets[g] is where group g starts.
	Sums    []int64
	Offsets []int
	// AccBits is the accumulator width the sum Base + Addend + Σ groups needs (32 or 64),
	// proven over every partial sum in group order; Acc is that range.
	AccBits int
	Acc     Interval
	// SumBits is the width of a Sums entry: 32 or 64.
	SumBits int
	// Scaled is set when the lanes hold byte offsets into Sums (index × SumBits/8): when
	// those fit 16 bits, which saves a shift per group.
	Scaled bool
}

// Bytes is the layout's table bytes as C lays them out (entries of the bucket structs, 8
// bytes aligned, and Sums).
func (l *RankLayout) Bytes() int {
	n := len(l.Sums) * l.SumBits / 8
	for _, f := range l.Features {
		n += len(f.Words) * RankEntryBytes(f.Fixups)
	}
	return n
}

// RankEntryBytes is the size of a bucket struct with m thresholds: int32 t[m], then uint64
// w[m+1], then RankPadWords(m) uint64 words of padding to a power of two (so a bucket's
// address is a shift, not a multiply).
func RankEntryBytes(m int) int {
	n := rankUnpadded(m)
	p := 8
	for p < n {
		p *= 2
	}
	return p
}

// RankPadWords is how many uint64 words pad a bucket struct with m thresholds.
func RankPadWords(m int) int { return (RankEntryBytes(m) - rankUnpadded(m)) / 8 }

func rankUnpadded(m int) int { return (4*m+7)/8*8 + 8*(m+1) }

// FeatureThresholds are the sorted distinct thresholds of feature f in the given trees.
func (ir *TreeIR) FeatureThresholds(trees []int, f int) []int32 {
	var ts []int32
	for _, t := range trees {
		for _, nd := range ir.Trees[t].Nodes {
			if nd.Kind == KindSplit && nd.Feature == f {
				ts = append(ts, nd.T)
			}
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// exceeded is how many of the sorted ts x exceeds: x > t.
func exceeded(ts []int32, x int32) int {
	n, _ := slices.BinarySearch(ts, x) // first index with ts[i] >= x
	return n
}

// RankFixups is how many of feature f's thresholds can share one bucket at shift s:
// the most thresholds t with x > t decided inside one bucket (t in [lo, hi−1]).
func (ir *TreeIR) RankFixups(f, s int) (fixups, buckets int) {
	return rankFixups(ir.FeatureThresholds(ir.allTrees(), f), ir.Inputs[f], s)
}

// allTrees are the indices of every tree.
func (ir *TreeIR) allTrees() []int {
	all := make([]int, len(ir.Trees))
	for t := range all {
		all[t] = t
	}
	return all
}

// bucketOf is the bucket of x at shift s from origin o, before the clamp.
func bucketOf(x int32, o int32, s int) int64 { return int64(x>>s) - int64(o) }

func rankFixups(ts []int32, in Input, s int) (fixups, buckets int) {
	// Buckets past the one holding the largest threshold are all alike: the last bucket
	// starts past it, and every larger input is clamped into it.
	o := in.Min >> s
	buckets = int(bucketOf(in.Max, o, s)) + 1
	if len(ts) > 0 {
		buckets = min(buckets, int(bucketOf(ts[len(ts)-1], o, s))+2)
	}
	counts := map[int64]int{}
	for _, t := range ts {
		b := bucketOf(t, o, s)
		if b >= int64(buckets-1) {
			b = int64(buckets - 1)
		}
		counts[b]++
		fixups = max(fixups, counts[b])
	}
	return fixups, buckets
}

// BuildRank lays the ensemble out as plan says, or says why it cannot: a group whose tables
// pass RankMaxEntries, more than RankLanes groups, a tree in no group or two.
func (ir *TreeIR) BuildRank(plan RankPlan) (*RankLayout, error) {
	if len(plan.Groups) == 0 || len(plan.Groups) > RankLanes {
		return nil, fmt.Errorf("quantize: rank form: %d groups, want 1 to %d", len(plan.Groups), RankLanes)
	}
	if len(plan.Shift) != len(ir.Inputs) {
		return nil, fmt.Errorf("quantize: rank form: %d shifts for %d inputs", len(plan.Shift), len(ir.Inputs))
	}
	seen := make([]bool, len(ir.Trees))
	for _, g := range plan.Groups {
		for _, t := range g {
			if t < 0 || t >= len(ir.Trees) || seen[t] {
				return nil, fmt.Errorf("quantize: rank form: tree %d is out of range or in two groups", t)
			}
			seen[t] = true
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return nil, fmt.Errorf("quantize: rank form: tree %d is in no group", i)
	}
	l := &RankLayout{Plan: plan, Groups: plan.Groups}
	nf := len(ir.Inputs)
	// local[g][f]: group g's thresholds on f; stride[g][f]: f's weight in g's index.
	local := make([][][]int32, len(plan.Groups))
	stride := make([][]int, len(plan.Groups))
	for g, trees := range plan.Groups {
		local[g] = make([][]int32, nf)
		stride[g] = make([]int, nf)
		size := 1
		for f := range nf {
			local[g][f] = ir.FeatureThresholds(trees, f)
			stride[g][f] = size
			size *= len(local[g][f]) + 1
			if size > RankMaxEntries {
				return nil, fmt.Errorf("quantize: rank form: group %d needs over %d table entries", g, RankMaxEntries)
			}
		}
		l.Offsets = append(l.Offsets, len(l.Sums))
		if len(l.Sums)+size > RankMaxEntries {
			return nil, fmt.Errorf("quantize: rank form: the groups need over %d table entries", RankMaxEntries)
		}
		l.Sums = append(l.Sums, ir.groupTable(trees, local[g], size)...)
	}
	all := ir.allTrees()
	l.proveAcc(ir)
	scale := 1
	if len(l.Sums)*l.SumBits/8 <= RankMaxEntries {
		l.Scaled, scale = true, l.SumBits/8
	}
	first := true
	for f := range nf {
		ts := ir.FeatureThresholds(all, f)
		if len(ts) == 0 {
			continue
		}
		s := plan.Shift[f]
		if s < 0 || s > 31 {
			return nil, fmt.Errorf("quantize: rank form: feature %d: shift %d is outside 0..31", f, s)
		}
		fx, nb := rankFixups(ts, ir.Inputs[f], s)
		if nb > RankMaxBuckets {
			return nil, fmt.Errorf("quantize: rank form: feature %d: %d buckets at shift %d, over %d", f, nb, s, RankMaxBuckets)
		}
		rf := RankFeature{Feature: f, Origin: ir.Inputs[f].Min >> s, Shift: s, Fixups: fx}
		// word is the lane word of an input with global rank r on f.
		word := func(r int) uint64 {
			x := ir.Inputs[f].Min
			if r > 0 {
				x = ts[r-1] + 1
			}
			var w uint64
			for g := range plan.Groups {
				lane := exceeded(local[g][f], x) * stride[g][f]
				if first {
					lane += l.Offsets[g]
				}
				lane *= scale
				w |= uint64(lane) << (RankLaneBits * g)
			}
			return w
		}
		for b := range nb {
			lo := (int64(rf.Origin) + int64(b)) << s // x in [lo, lo + 2^s) lands in bucket b
			var in []int32
			for _, t := range ts {
				if int64(t) >= lo && (b == nb-1 || int64(t) < lo+int64(1)<<s) {
					in = append(in, t)
				}
			}
			base := exceeded(ts, int32(max(lo, math.MinInt32)))
			th := make([]int32, fx)
			ws := make([]uint64, fx+1)
			for k := range th {
				th[k] = math.MaxInt32
				if k < len(in) {
					th[k] = in[k]
				}
			}
			for k := range ws {
				ws[k] = word(base + min(k, len(in)))
			}
			rf.Thresholds = append(rf.Thresholds, th)
			rf.Words = append(rf.Words, ws)
		}
		l.Features = append(l.Features, rf)
		first = false
	}
	if first { // no splits at all: one lane word of offsets is never added
		return nil, fmt.Errorf("quantize: rank form: the ensemble has no split")
	}
	return l, nil
}

// groupTable is the sum of the group's leaves for every cell of its local ranks (feature 0's
// rank varying fastest), each cell evaluated at its lowest input.
func (ir *TreeIR) groupTable(trees []int, local [][]int32, size int) []int64 {
	sums := make([]int64, size)
	x := make([]int32, len(ir.Inputs))
	for i := range sums {
		k := i
		for f, ts := range local {
			r := k % (len(ts) + 1)
			k /= len(ts) + 1
			x[f] = ir.Inputs[f].Min
			if r > 0 {
				x[f] = ts[r-1] + 1
			}
		}
		for _, t := range trees {
			sums[i] += ir.Trees[t].Leaf(x).Value
		}
	}
	return sums
}

// proveAcc bounds Base + Addend and every partial sum over the groups, in group order, and
// sizes the accumulator and the table entries.
func (l *RankLayout) proveAcc(ir *TreeIR) {
	start := ir.Base + ir.Addend
	l.Acc = Interval{start, start}
	lo, hi := start, start
	tlo, thi := int64(0), int64(0)
	for g := range l.Groups {
		end := len(l.Sums)
		if g+1 < len(l.Offsets) {
			end = l.Offsets[g+1]
		}
		part := l.Sums[l.Offsets[g]:end]
		mn, mx := slices.Min(part), slices.Max(part)
		lo, hi = lo+mn, hi+mx
		l.Acc = Interval{min(l.Acc.Lo, lo), max(l.Acc.Hi, hi)}
		tlo, thi = min(tlo, mn), max(thi, mx)
	}
	l.AccBits, l.SumBits = 64, 64
	if l.Acc.Lo >= math.MinInt32 && l.Acc.Hi <= math.MaxInt32 {
		l.AccBits = 32
	}
	if tlo >= math.MinInt32 && thi <= math.MaxInt32 {
		l.SumBits = 32
	}
}

// EvalScore is what the rank form's C computes, in Go: for tests of the layout against
// TreeIR.EvalScore (for inputs within the ranges).
func (l *RankLayout) EvalScore(ir *TreeIR, x []int32) int64 {
	var w uint64
	for _, f := range l.Features {
		b := uint64(int64(x[f.Feature]>>f.Shift) - int64(f.Origin))
		b = min(b, uint64(len(f.Words)-1))
		k := 0
		for _, t := range f.Thresholds[b] {
			if x[f.Feature] > t {
				k++
			}
		}
		w += f.Words[b][k]
	}
	s := ir.Base
	for g := range l.Groups {
		i := (w >> (RankLaneBits * g)) & (RankMaxEntries - 1)
		if l.Scaled {
			i /= uint64(l.SumBits / 8)
		}
		s += l.Sums[i]
	}
	return s
}
