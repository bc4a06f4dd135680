package quantize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// packedTeacher is the shipped teacher quantized with MLPOptions.Packed (and OpenReLU if open)
// on sampled RL-CC states.
func packedTeacher(t *testing.T, open bool) *MLPIR {
	t.Helper()
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testutil.RLCCRows(5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := MLP(m, GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout)), rows, MLPOptions{WeightBits: 16, ChannelScales: true, Packed: true, OpenReLU: open})
	if err != nil {
		t.Fatal(err)
	}
	return ir
}

// laneInputs are vectors over a layer's input ranges: every corner of the first inputs (the
// extremes that make the lane bounds) and random values.
func laneInputs(rng []Interval, n int, r *rand.Rand) [][]int64 {
	var vs [][]int64
	for mask := range 1 << min(len(rng), 10) {
		v := make([]int64, len(rng))
		for i, b := range rng {
			v[i] = b.Lo
			if i < 10 && mask>>i&1 == 1 || i >= 10 && r.IntN(2) == 1 {
				v[i] = b.Hi
			}
		}
		vs = append(vs, v)
	}
	for range n {
		v := make([]int64, len(rng))
		for i, b := range rng {
			v[i] = b.Lo + r.Int64N(b.Hi-b.Lo+1)
		}
		vs = append(vs, v)
	}
	return vs
}

// checkGroups: every group of packed layer l's channels (Lanes to a word), computed the
// firmware's way (GroupZ over PackGroup's words, wrapping mod 2^64), gives the golden model's
// requantized z of each channel, at the corners of the input ranges and at n random inputs.
// It returns how many groups it checked.
func checkGroups(t *testing.T, what string, l *MLPLayer, n int, r *rand.Rand) int {
	t.Helper()
	groups := 0
	for a := 0; a < l.Out; a += l.Lanes() {
		var chans []int
		var shifts []int
		for c := a; c < min(a+l.Lanes(), l.Out); c++ {
			if err := l.Packable(c); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			chans, shifts = append(chans, c), append(shifts, l.Shift[c])
		}
		bias, w := l.PackGroup(chans)
		for _, v := range laneInputs(l.InRange, n, r) {
			z := l.GroupZ(bias, w, v, shifts)
			for m, c := range chans {
				if want := Requant(l.sum(c, v), 1, l.Shift[c]); z[m] != want {
					t.Fatalf("%s channel %d at %v: packed z %d, golden %d", what, c, v, z[m], want)
				}
			}
		}
		groups++
	}
	return groups
}

// TestPackedPairsEqualGolden: every pair of every packed layer of the teacher gives the
// golden model's z (checkGroups).
func TestPackedPairsEqualGolden(t *testing.T) {
	ir := packedTeacher(t, false)
	r := rand.New(rand.NewPCG(1, 2))
	pairs := 0
	for k := range ir.Layers {
		l := &ir.Layers[k]
		if l.Final {
			continue
		}
		if l.LaneBits != PairLaneBits {
			t.Fatalf("layer %d: %d-bit lanes, want pairs", k, l.LaneBits)
		}
		pairs += checkGroups(t, fmt.Sprintf("layer %d", k), l, 2000, r)
	}
	if pairs != 12 {
		t.Errorf("checked %d pairs, want 12 (two hidden layers of 12)", pairs)
	}
}

// sum is channel j's accumulator B + Σ W·v, as the golden model computes it.
func (l *MLPLayer) sum(j int, v []int64) int64 {
	acc := int64(l.B[j])
	for i, w := range l.W[j] {
		acc += int64(w) * v[i]
	}
	return acc
}

// TestPackableRefusesOverflow: a channel whose proven accumulator leaves its 32-bit lane is
// refused, and the refusal is needed: at the input that reaches the bound, the packed pair
// computes the wrong z.
func TestPackableRefusesOverflow(t *testing.T) {
	ir := packedTeacher(t, false)
	l := &ir.Layers[1]
	// Channel 0's positive weights grown to the int16 top, so its proven sum passes 2^31.
	for c, w := range l.W[0] {
		if w > 0 {
			l.W[0][c] = math.MaxInt16
		}
	}
	l.Acc[0] = partialSums(l.W[0], int64(l.B[0]), l.InRange)
	if l.Acc[0].Hi+half(l.Shift[0]) <= math.MaxInt32 {
		t.Fatalf("the grown weights leave the sum %v in the lane", l.Acc[0])
	}
	err := l.Packable(0)
	if err == nil || !strings.Contains(err.Error(), "does not fit a 32-bit lane") {
		t.Fatalf("Packable = %v, want a lane refusal", err)
	}
	if l.Packable(1) != nil {
		t.Errorf("channel 1 refused too: %v", l.Packable(1))
	}
	v := make([]int64, l.In)
	for c, w := range l.W[0] {
		v[c] = l.InRange[c].Lo
		if w > 0 {
			v[c] = l.InRange[c].Hi
		}
	}
	bias, w := l.PackGroup([]int{0, 1})
	za := l.GroupZ(bias, w, v, []int{l.Shift[0], l.Shift[1]})[0]
	if want := Requant(l.sum(0, v), 1, l.Shift[0]); za == want {
		t.Errorf("at the bound the packed lane still gives %d: the overflow case is not exercised", za)
	}
	// A multiply-requantized channel is never packed.
	f := &ir.Layers[len(ir.Layers)-1]
	if f.Packable(0) == nil {
		t.Error("the final layer was accepted for a lane")
	}
}

// TestPackedFidelity: the packed teacher meets the compile's targets on its calibration rows
// (max |Δy| ≤ 2/128, flips ≤ 0.1%), with int32 accumulators in every hidden layer.
func TestPackedFidelity(t *testing.T) {
	ir := packedTeacher(t, false)
	f := ir.Fidelity
	t.Logf("packed teacher: %d rows, max |dy| %.5f (%.2f/128), flips %.3f%%, input shifts %v", f.Rows, f.MaxAbs, 128*f.MaxAbs, 100*f.Flips, ir.InShift)
	if f.MaxAbs > 2.0/128 || f.Flips > 0.001 {
		t.Errorf("max |dy| %g, flips %g: over the targets", f.MaxAbs, f.Flips)
	}
	for k, l := range ir.Layers[:len(ir.Layers)-1] {
		if l.AccBits != 32 {
			t.Errorf("layer %d: %d-bit accumulators", k, l.AccBits)
		}
	}
}

// TestOpenReluDoesNotSaturate: a packed hidden relu keeps z above the grid's top: at the
// input corner that maximizes a layer-0 channel whose proven z passes 32767, the golden trace
// holds the requantized sum itself, and the next layer's input range reaches it.
func TestOpenReluDoesNotSaturate(t *testing.T) {
	ir := packedTeacher(t, true)
	l := &ir.Layers[0]
	if !l.Open {
		t.Fatal("the packed teacher's layer 0 is not open")
	}
	j := -1
	for c := range l.Out {
		if l.Z[c].Hi > l.ZMax() && (j < 0 || l.Z[c].Hi > l.Z[j].Hi) {
			j = c
		}
	}
	if j < 0 {
		t.Fatal("no layer-0 channel's proven z passes the grid's top")
	}
	raw := make([]int32, len(ir.Inputs))
	v := make([]int64, len(ir.Inputs))
	for i, in := range ir.Inputs {
		raw[i], v[i] = in.Min, l.InRange[i].Lo
		if l.W[j][i] > 0 {
			raw[i], v[i] = in.Max, l.InRange[i].Hi
		}
	}
	_, tr := ir.EvalTrace(raw)
	want := Requant(l.sum(j, v), l.Mult[j], l.Shift[j])
	if want <= l.ZMax() || tr[0][j] != want {
		t.Errorf("channel %d at %v: traced %d, requantized sum %d (grid top %d)", j, raw, tr[0][j], want, l.ZMax())
	}
	if got := ir.Layers[1].InRange[j].Hi; got != l.Z[j].Hi {
		t.Errorf("layer 1 input %d range top %d, want layer 0's proven %d", j, got, l.Z[j].Hi)
	}
}

// lanesNet is a 4 → 7 → 5 → 1 tanh network with biases (weights normal, σ 1/√in) quantized
// packed w8/a8 on sampled RL-CC states.
func lanesNet(t *testing.T) *MLPIR {
	t.Helper()
	m := testutil.TanhMLP(rand.New(rand.NewPCG(5, 6)), 7, 5)
	rows, err := testutil.RLCCRows(5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := MLP(m, GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout)), rows, MLPOptions{WeightBits: 8, ActBits: 8, ChannelScales: true, Packed: true})
	if err != nil {
		t.Fatal(err)
	}
	return ir
}

// TestTripleLanesEqualGolden: packed w8/a8, the first layer (over the int32 inputs) takes
// 32-bit pairs and int16 weights, the second (over int8 tanh outputs) int8 weights in 21-bit
// lanes, a group of three and one of two; every group gives the golden model's z.
func TestTripleLanesEqualGolden(t *testing.T) {
	ir := lanesNet(t)
	l0, l1 := &ir.Layers[0], &ir.Layers[1]
	if l0.LaneBits != PairLaneBits || ir.LayerWeightBits(l0) != 16 || l1.LaneBits != TripleLaneBits || ir.LayerWeightBits(l1) != 8 {
		t.Fatalf("lanes %d and %d, weights int%d and int%d: want pairs of int16, then threes of int8", l0.LaneBits, l1.LaneBits, ir.LayerWeightBits(l0), ir.LayerWeightBits(l1))
	}
	for j, w := range l1.W {
		for _, x := range w {
			if x < math.MinInt8 || x > math.MaxInt8 {
				t.Fatalf("layer 1 channel %d weight %d is not int8", j, x)
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	checkGroups(t, "layer 0", l0, 2000, r)
	if g := checkGroups(t, "layer 1", l1, 2000, r); g != 2 {
		t.Errorf("layer 1: %d groups, want 2 (three lanes and two)", g)
	}
}

// TestTripleLaneRefusesOverflow: a 21-bit lane whose proven sum passes 2^20 is refused, and
// the refusal is needed: at the inputs that reach the bound, its group computes the wrong z.
func TestTripleLaneRefusesOverflow(t *testing.T) {
	ir := lanesNet(t)
	l := &ir.Layers[1]
	for c, w := range l.W[1] {
		l.W[1][c] = math.MaxInt8
		if w < 0 {
			l.W[1][c] = math.MinInt8
		}
	}
	l.B[1] = 1 << 20
	l.Acc[1] = partialSums(l.W[1], int64(l.B[1]), l.InRange)
	err := l.Packable(1)
	if err == nil || !strings.Contains(err.Error(), "does not fit a 21-bit lane") {
		t.Fatalf("Packable = %v, want a lane refusal", err)
	}
	v := make([]int64, l.In)
	for c, w := range l.W[1] {
		v[c] = l.InRange[c].Lo
		if w > 0 {
			v[c] = l.InRange[c].Hi
		}
	}
	bias, w := l.PackGroup([]int{0, 1, 2})
	z := l.GroupZ(bias, w, v, []int{l.Shift[0], l.Shift[1], l.Shift[2]})
	if want := Requant(l.sum(1, v), 1, l.Shift[1]); z[1] == want {
		t.Errorf("at the bound the packed lane still gives %d: the overflow case is not exercised", z[1])
	}
}

// TestPackedW8Coarsens: the shipped teacher packed w8/a8 (relu over int8 activations, so its
// second layer in 21-bit lanes) quantizes although one channel's weights overflow int8 at
// every shift: its z grid coarsens instead, and its groups still give the golden model's z.
func TestPackedW8Coarsens(t *testing.T) {
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testutil.RLCCRows(5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := MLP(m, GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout)), rows, MLPOptions{WeightBits: 8, ActBits: 8, ChannelScales: true, Packed: true})
	if err != nil {
		t.Fatal(err)
	}
	_, chMax, err := calibrateMLP(m, ir.Inputs, rows)
	if err != nil {
		t.Fatal(err)
	}
	l := &ir.Layers[1]
	if l.LaneBits != TripleLaneBits {
		t.Fatalf("layer 1: %d-bit lanes", l.LaneBits)
	}
	coarse := 0
	for j := range l.Out {
		// Coarsened: a grid step at least twice the calibrated one.
		if l.ZScale[j] >= 1.5*chMax[1][j]/127 {
			coarse++
		}
	}
	if coarse == 0 {
		t.Errorf("no layer-1 channel coarsened (shifts %v)", l.Shift)
	}
	checkGroups(t, "layer 1", l, 2000, rand.New(rand.NewPCG(9, 10)))
}
