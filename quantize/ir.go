// Package quantize turns nicc's float IR into its integer IR, whose Go evaluator is the golden
// model: codegen only prints the IR, and verification compares the host build and the firmware
// against the evaluator. There are three integer IRs:
//
//   - TreeIR (Trees, this file and trees.go): fixed-point input formats, integer thresholds that
//     are exact for every representable input, leaves in a wide fixed-point accumulator with a
//     proven range, and one rounding at the end; golden model TreeIR.Eval. The sections below
//     describe it.
//   - MLPIR (MLP, mlp.go): int8 or int16 weights with calibrated per-channel scales, proven
//     accumulators, requantization by multiply and shift, ReLU as a clamp and tanh by table;
//     golden model MLPIR.Eval.
//   - LSTMIR (LSTM, lstm.go): three 21-bit lanes packed per uint64, table gates, int8 h and c
//     in the flow context; golden model LSTMIR.Step, one decision per step.
//
// # Fixed point
//
// A feature is an int32 raw value r in the declared raw range [Input.Min, Input.Max]; it means
// r / 2^Input.Frac. Leaves and the base score are integers in Q(TreeIR.AccFrac): a value v
// becomes round(v · 2^AccFrac), rounded half away from zero (math.Round), an error of at most
// 2^-(AccFrac+1) per value. The accumulator S = Base + Σ leaf is exact integer arithmetic, and
// its range, and that of every partial sum, is proven by interval analysis over the leaves, so
// it never overflows its C type (int32_t when the proof allows, else int64_t).
//
// # Rounding
//
// The result is rounded once, from Q(AccFrac) to Q(OutFrac), half up (ties toward +∞):
//
//	y = (S + 2^(s-1)) >> s,  s = AccFrac − OutFrac  (arithmetic shift, i.e. floor)
//
// and y = S when s = 0; that is, y = floor(S/2^s + 1/2): the nearest Q(OutFrac) value, a tie
// going up. The generated C adds the addend first (the accumulator starts at Base + 2^(s-1),
// TreeIR.Addend) and shifts at the end; the sum is the same. With Clamp set, y is then clamped to [ClampMin, ClampMax]; without it,
// the proven range of y must fit int32 or Trees fails.
//
// # Splits
//
// Every float split — x < t (XGBoost), x <= t (LightGBM, scikit-learn), x > t (CatBoost), each
// with a float32 compare when Ensemble.SplitsFloat32 says so — becomes the integer test
// raw <= T, true going left (a > split swaps its children). T is computed from t·2^Frac and
// then fixed by the float predicate itself (model.Node.GoesLeft at float64(raw)/2^Frac), so
// that the split sends T to its low side and T+1 to its high side. The predicate is monotone in raw
// (raw/2^Frac is exact in float64, float32 rounding is monotone, and a comparison with a fixed
// t is monotone), so those two checks prove the branch equal for every raw in [Min, Max].
// A split that is constant over [Min, Max] is folded away: its subtree becomes the child every
// representable input reaches (Stats.Folded lists them).
//
// # Missing values
//
// A fixed-point feature is never missing: there is no NaN in int32. Default directions
// (Node.DefaultLeft) therefore never apply: they are honoured vacuously, not refused, so that
// every XGBoost model (whose splits all carry one) compiles. The one place a missing-value rule
// touches a representable value is LightGBM's missing type Zero, which sends x = 0 the default
// way: when raw 0 is in range and that disagrees with the threshold test, Trees refuses the
// split with an error, since raw <= T cannot express it.
//
// # Transform
//
// The ensemble's transform (sigmoid) is not computed on the NIC: the integer output is the raw
// score Base + Σ leaf in Q(OutFrac). TreeIR.Predict applies the transform in float for reports.
package quantize

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicc-dev/nicc/model"
)

// Limits on a fixed-point format's fraction bits.
const (
	MinFrac = -32
	MaxFrac = 62
)

// DefaultOutFrac is the output format when TreeOptions.OutFrac is 0: Q16, what the RL-CC handler
// takes.
const DefaultOutFrac = 16

// MaxOutFrac is the most fraction bits an output may have.
const MaxOutFrac = 30

// DefaultAccFrac is the accumulator's fraction bits when TreeOptions.AccFrac is 0: leaves at 2^-24
// resolution, lowered when the proven sum would not fit int64.
const DefaultAccFrac = 24

// Input is one feature's signed fixed-point format: the int32 raw value r means r / 2^Frac, and
// only r in [Min, Max] is ever fed to the model.
type Input struct {
	Name     string
	Frac     int
	Min, Max int32
}

// Value is the real number raw stands for, exactly (raw / 2^Frac is exact in float64).
func (in Input) Value(raw int32) float64 { return math.Ldexp(float64(raw), -in.Frac) }

// Quantize is the raw value nearest v (ties away from zero), clamped to [Min, Max]. NaN gives
// Min. For v in [Value(Min), Value(Max)] the error |v − Value(raw)| is at most 2^-(Frac+1).
func (in Input) Quantize(v float64) int32 {
	if math.IsNaN(v) {
		return in.Min
	}
	r := math.Round(math.Ldexp(v, in.Frac))
	if r <= float64(in.Min) {
		return in.Min
	}
	if r >= float64(in.Max) {
		return in.Max
	}
	return int32(r)
}

// Resolution is the value of one raw step, 2^-Frac.
func (in Input) Resolution() float64 { return math.Ldexp(1, -in.Frac) }

func (in Input) String() string {
	return fmt.Sprintf("%s Q%d raw [%d, %d] = [%g, %g]", in.Name, in.Frac, in.Min, in.Max, in.Value(in.Min), in.Value(in.Max))
}

// TreeOptions control Trees.
type TreeOptions struct {
	// OutFrac is the output's fraction bits, 1..MaxOutFrac: Eval returns the score in
	// Q(OutFrac). 0 means DefaultOutFrac.
	OutFrac int
	// AccFrac is the accumulator's fraction bits, at least OutFrac. 0 means: DefaultAccFrac
	// (or OutFrac when that is larger), lowered step by step while the proven accumulator
	// range does not fit int64; an explicit AccFrac that does not fit is an error.
	AccFrac int
	// Clamp clamps the rounded output to [ClampMin, ClampMax] (raw Q(OutFrac) values).
	Clamp              bool
	ClampMin, ClampMax int32
}

// NodeKind is what an integer tree node does.
type NodeKind int

const (
	// KindSplit tests x[Feature] <= T: true goes to Left, false to Right.
	KindSplit NodeKind = iota
	// KindLeaf adds Value to the accumulator.
	KindLeaf
	kindEnd
)

var kindNames = [...]string{KindSplit: "split", KindLeaf: "leaf"}

func (k NodeKind) String() string {
	if k >= 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("NodeKind(%d)", int(k))
}

// Node is one node of an integer tree.
type Node struct {
	Kind NodeKind
	// Split: x[Feature] <= T goes to Nodes[Left], else Nodes[Right]. Input(Feature).Min <= T
	// < Input(Feature).Max: constant splits are folded away.
	Feature     int
	T           int32
	Left, Right int
	// Leaf: the leaf value in Q(AccFrac).
	Value int64
	// Src is the index of the float node this node came from.
	Src int
}

// Level is one level of an oblivious tree: every node at this depth tests x[Feature] <= T.
type Level struct {
	Feature int
	T       int32
}

// Tree is an integer decision tree; its root is Nodes[0] and children come after parents.
type Tree struct {
	// Src is the index of the float tree in the source ensemble.
	Src   int
	Nodes []Node
	// Depth is the number of splits on the longest root-to-leaf path.
	Depth int
	// Oblivious is set when the tree is complete and every level tests one feature against one
	// threshold. Then Levels holds the tests, root first, and Table the 2^Depth leaves, indexed
	// by the comparison bits: bit Depth-1-d is 1 when level d's test is false (goes right).
	Oblivious bool
	Levels    []Level
	Table     []int64
}

// Interval is a closed range of integers.
type Interval struct{ Lo, Hi int64 }

// Contains reports whether v is in the interval.
func (iv Interval) Contains(v int64) bool { return iv.Lo <= v && v <= iv.Hi }

// TreeIR is the integer IR of a tree ensemble: y = round(Base + Σ trees) in Q(OutFrac).
type TreeIR struct {
	// Name is the source model's name.
	Name string
	// ModelHash is the hex SHA-256 of the source model's canonical native JSON (model.Marshal).
	ModelHash string
	Inputs    []Input

	// AccFrac is the accumulator's fraction bits; Base and every leaf are in Q(AccFrac).
	AccFrac int
	Base    int64
	Trees   []Tree
	// Addend is the rounding addend 2^(AccFrac−OutFrac−1) (0 when AccFrac == OutFrac). The C
	// accumulator starts at Base + Addend, adds one leaf per tree in order, and ends with
	// >> (AccFrac − OutFrac): the same value as Round(EvalScore(x)).
	Addend int64
	// Acc is the proven range of that C accumulator: of Base + Addend and of every partial
	// sum, in tree order.
	Acc Interval
	// AccBits is the width of the accumulator C needs for Acc: 32 or 64.
	AccBits int

	// OutFrac is the output's fraction bits; Eval rounds half up from Q(AccFrac) to Q(OutFrac).
	OutFrac int
	// Rounded is the proven range of the rounded score before the clamp; Out is the proven
	// range of the output (after the clamp, if any).
	Rounded, Out       Interval
	Clamp              bool
	ClampMin, ClampMax int32

	// Transform and SigmoidScale are the source ensemble's; not applied by Eval (see Predict).
	Transform    model.Transform
	SigmoidScale float64

	Stats Stats
}

// Folded is a float split that is constant over its input's raw range and was folded away.
type Folded struct {
	Tree, Node int // source tree and node
	Feature    int
	Threshold  float64
	Cmp        model.Cmp
	Left       bool // every representable input goes left
}

// Stats describes a TreeIR and bounds its quantization error.
type Stats struct {
	// Trees counts the source trees; Nodes, Splits, Leaves and MaxDepth describe the integer
	// trees (after folding).
	Trees, Nodes, Splits, Leaves, MaxDepth int
	// Oblivious counts the oblivious trees.
	Oblivious int
	// SplitsPerFeature and ThresholdsPerFeature count the integer splits and the distinct
	// thresholds on each input.
	SplitsPerFeature, ThresholdsPerFeature []int
	// Folded lists the float splits that are constant over the raw ranges.
	Folded []Folded
	// ConstTrees lists the source trees that folded down to one leaf; their leaf is in Base.
	ConstTrees []int

	// InputErr[i] = 2^-(Frac+1) is the largest |v − Value(Quantize(v))| for v in input i's range.
	InputErr []float64
	// LeafErr bounds |(Base + Σ leaf)/2^AccFrac − (base + Σ leaf)| over every path, from the
	// actual rounding error of each leaf (worst leaf per tree, summed). It is at most
	// LeafErrBound = (trees + 1) · 2^-(AccFrac+1).
	LeafErr, LeafErrBound float64
	// OutErr = 2^-(OutFrac+1) is the final rounding's bound (0 when AccFrac == OutFrac).
	OutErr float64
	// ScoreErr = LeafErr + OutErr bounds |Eval(raw)/2^OutFrac − float score at Value(raw)| for
	// every raw input in range, taking the float score in exact arithmetic and ignoring the
	// clamp. A float32 ensemble (XGBoost) adds its own float32 accumulation error on top.
	ScoreErr float64
}

// ChooseInputs picks each feature's format from its declared float range [lo[i], hi[i]]: the
// largest Frac in [MinFrac, MaxFrac] such that round(lo·2^Frac) and round(hi·2^Frac) fit int32,
// with that raw range recorded as [Min, Max].
func ChooseInputs(names []string, lo, hi []float64) ([]Input, error) {
	return chooseInputs(names, lo, hi)
}

// Trees quantizes a tree ensemble over the given input formats, one per model input, in the
// model's input order. It fails on a model that is not an ensemble, non-finite values, a
// LightGBM Zero-missing split the integer test cannot express, and an accumulator or output
// whose proven range does not fit.
func Trees(m *model.Model, inputs []Input, opt TreeOptions) (*TreeIR, error) {
	return trees(m, inputs, opt)
}

// EvalScore is the accumulator Base + Σ leaf, in Q(AccFrac), for raw inputs x (one per
// input). It is exact integer arithmetic and defined for every int32 input; it matches the
// float model's branches for inputs within the raw ranges.
func (ir *TreeIR) EvalScore(x []int32) int64 {
	s := ir.Base
	for t := range ir.Trees {
		s += ir.Trees[t].Leaf(x).Value
	}
	return s
}

// Eval is the golden model: EvalScore rounded once to Q(OutFrac) (half up), then clamped when
// Clamp is set.
func (ir *TreeIR) Eval(x []int32) int32 { return ir.Round(ir.EvalScore(x)) }

// Round maps an accumulator value s = EvalScore(x) to the output: (s + 2^(k-1)) >> k with
// k = AccFrac − OutFrac (floor of a half-up tie), then the clamp.
func (ir *TreeIR) Round(s int64) int32 {
	if k := ir.AccFrac - ir.OutFrac; k > 0 {
		s = (s + 1<<(k-1)) >> k
	}
	if ir.Clamp {
		s = min(max(s, int64(ir.ClampMin)), int64(ir.ClampMax))
	}
	return int32(s)
}

// Leaf walks tree t for x and returns the leaf it reaches.
func (t *Tree) Leaf(x []int32) *Node {
	n := &t.Nodes[0]
	for n.Kind == KindSplit {
		if x[n.Feature] <= n.T {
			n = &t.Nodes[n.Left]
		} else {
			n = &t.Nodes[n.Right]
		}
	}
	return n
}

// OutValue is the real number an output y stands for, y / 2^OutFrac.
func (ir *TreeIR) OutValue(y int32) float64 { return math.Ldexp(float64(y), -ir.OutFrac) }

// Predict applies the ensemble's transform, in float64, to an output y: what the source tool
// would report (a probability for a sigmoid ensemble). The NIC never computes it.
func (ir *TreeIR) Predict(y int32) float64 {
	v := ir.OutValue(y)
	if ir.Transform == model.TransformSigmoid {
		k := ir.SigmoidScale
		if k == 0 {
			k = 1
		}
		return 1 / (1 + math.Exp(-k*v))
	}
	return v
}

// EdgeValues are the raw values of input i worth testing, sorted and distinct: the ends of
// its range and, for every threshold T on it, T−1, T and T+1 (the last value on the low side
// of the split, its neighbour below, and the first value on the high side), clipped to the
// range.
func (ir *TreeIR) EdgeValues(i int) []int32 {
	in := ir.Inputs[i]
	set := map[int32]bool{in.Min: true, in.Max: true}
	for t := range ir.Trees {
		for _, nd := range ir.Trees[t].Nodes {
			if nd.Kind != KindSplit || nd.Feature != i {
				continue
			}
			for d := int64(-1); d <= 1; d++ {
				if v := int64(nd.T) + d; v >= int64(in.Min) && v <= int64(in.Max) {
					set[int32(v)] = true
				}
			}
		}
	}
	out := make([]int32, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
