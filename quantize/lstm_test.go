package quantize_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/quantize"
)

func shippedLSTM(t testing.TB, n int) (*model.Model, *quantize.LSTMIR, [][]float64) {
	t.Helper()
	b, err := os.ReadFile("../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	rows := rlccStates(t, n, 1)
	ir, err := quantize.LSTM(m, rlccInputs(), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m, ir, rows
}

// The shipped LSTM policy: shapes, the lane proofs, tables exact per entry, and fidelity
// against the float model over the calibration sequences (a regression bound: the issue sets
// no target for the LSTM).
func TestLSTMShipped(t *testing.T) {
	_, ir, _ := shippedLSTM(t, 20000)
	if ir.Hidden != 12 || ir.StateBytes() != 24 || ir.StateWords() != 6 || ir.Pre.Out != 12 || ir.Gates.Out != 48 || ir.Gates.In != 24 {
		t.Fatalf("shape: hidden %d state %d bytes, pre %d, gates %d over %d", ir.Hidden, ir.StateBytes(), ir.Pre.Out, ir.Gates.Out, ir.Gates.In)
	}
	if ir.Pre.Bits != quantize.PreLaneBits || ir.Gates.Bits != quantize.LaneBits {
		t.Errorf("lanes: dense %d bits, gates %d", ir.Pre.Bits, ir.Gates.Bits)
	}
	for _, l := range []*quantize.LaneLayer{&ir.Pre, &ir.Gates} {
		for j, v := range l.V {
			if v.Lo < -1<<(l.Bits-1) || v.Hi >= 1<<(l.Bits-1) || l.Shift[j] < 0 || l.Shift[j] >= l.Bits {
				t.Errorf("channel %d: proven sum %v, shift %d", j, v, l.Shift[j])
			}
		}
	}
	for k := range 256 {
		z := float64(k - 128)
		if want := math.Round(128 / (1 + math.Exp(-z*quantize.SigStep))); float64(ir.Sigmoid[k]) != want {
			t.Errorf("sigmoid[%d] = %d, want %v", k, ir.Sigmoid[k], want)
		}
	}
	if len(ir.OutTable) != 2*quantize.OutHalf {
		t.Errorf("output table of %d entries", len(ir.OutTable))
	}
	for k, y := range ir.OutTable {
		z := float64(k - quantize.OutHalf)
		if want := math.Round(math.Ldexp(math.Tanh(z*ir.OutScale), ir.OutFrac)); float64(y) != want {
			t.Errorf("out[%d] = %d, want %v", k, y, want)
		}
	}
	for k, v := range ir.TanhC {
		centre := (float64(int64(k)+ir.CellLo) + 0.5) * math.Ldexp(ir.CellScale, ir.CellShift) / 128
		if want := math.Round(127 * math.Tanh(centre)); float64(v) != want {
			t.Errorf("tanh_c[%d] = %d, want %v", k, v, want)
		}
	}
	checkCellCode(t, ir)
	f := ir.Fidelity
	if f.Rows != 20000 || f.MaxAbs > 0.0095 || f.Flips > 0.006 {
		t.Errorf("fidelity %+v", f)
	}
	t.Logf("fidelity over %d rows in sequences of %d: max |dy| %.5f (%.2f/128), flips %.3f%%; input shifts %v, dense shifts %v, gate shifts %v, cell scale %g",
		f.Rows, ir.SeqLen, f.MaxAbs, 128*f.MaxAbs, 100*f.Flips, ir.InShift, ir.Pre.Shift, ir.Gates.Shift, ir.CellScale)
}

// checkCellCode: the cell's code is a monotone odd μ-law grid from 0, every t's new code is
// the code nearest its step's centre, and the new codes never decrease with t.
func checkCellCode(t *testing.T, ir *quantize.LSTMIR) {
	t.Helper()
	d := ir.CellDec
	if d[128] != 0 || d[0] != d[1] || !slices.IsSorted(d) || d[255] != quantize.CellUnits {
		t.Errorf("cell codes' values %v", d)
	}
	for k := 1; k < 128; k++ {
		if d[128+k] != -d[128-k] {
			t.Errorf("code %d is worth %d, code %d %d", k, d[128+k], -k, d[128-k])
		}
	}
	if !slices.IsSorted(ir.CellEnc) {
		t.Error("the new code decreases with the cell")
	}
	for k, e := range ir.CellEnc {
		centre := (float64(int64(k)+ir.CellLo) + 0.5) * math.Ldexp(1, ir.CellShift) / 128
		got := math.Abs(float64(d[int(e)+128]) - centre)
		for c := -127; c <= 127; c++ {
			if math.Abs(float64(d[c+128])-centre) < got-0.5 {
				t.Fatalf("t %d (centre %g): code %d (%d), but code %d is %d", int64(k)+ir.CellLo, centre, e, d[int(e)+128], c, d[c+128])
			}
		}
	}
}

// The trained LSTM (rlcc_adpg_lstm, issue 31): its cell reaches |c| ≈ 20, which an int8 grid
// from the 99.9th percentile measured at max |Δy| 0.165 and 2.2% flips; the μ-law code and
// the dense layer's 32-bit lanes bring it to 0.075 and 0.95%; 14-bit inputs, x_t on [0, 767]
// and the output's 1024-entry grid over its calibrated range to 0.073 and 0.70% (a regression
// bound: the target is 0.02 and 0.5%).
func TestLSTMTrained(t *testing.T) {
	b, err := os.ReadFile("../testdata/models/rlcc_adpg_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := quantize.LSTM(m, rlccInputs(), rlccStates(t, 20000, 1), quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkCellCode(t, ir)
	if f := ir.Fidelity; f.MaxAbs > 0.075 || f.Flips > 0.0075 || ir.CellMax < 19 {
		t.Errorf("fidelity %+v, cell code to %g", f, ir.CellMax)
	}
	t.Logf("max |dy| %.4f, flips %.3f%%; cell code to %.3g, mu %g", ir.Fidelity.MaxAbs, 100*ir.Fidelity.Flips, ir.CellMax, ir.CellMu)
}

// Step is total: any input and any state bytes (a context may hold anything) give an output
// in the proven range and a new state of h and c in [-127, 127], and the same call twice
// gives the same result.
func TestLSTMStepTotal(t *testing.T) {
	_, ir, _ := shippedLSTM(t, 2000)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := make([]int32, len(ir.Inputs))
		for i := range x {
			x[i] = int32(rng.Uint32())
		}
		st := make([]uint32, ir.StateWords())
		for i := range st {
			st[i] = rng.Uint32()
		}
		again := slices.Clone(st)
		y := ir.Step(x, st)
		if y2 := ir.Step(x, again); y2 != y || !slices.Equal(st, again) {
			t.Fatalf("x %v: Step is not deterministic", x)
		}
		if int64(y) < ir.OutRange.Lo || int64(y) > ir.OutRange.Hi {
			t.Fatalf("x %v: y %d outside %v", x, y, ir.OutRange)
		}
		for k := range ir.StateBytes() {
			if b := int8(st[k/4] >> (8 * (k % 4))); b < -127 {
				t.Fatalf("x %v: state byte %d is %d", x, k, b)
			}
		}
	}
}

func TestLSTMRefuses(t *testing.T) {
	m, _, rows := shippedLSTM(t, 100)
	with := func(f func(m *model.Model)) *model.Model {
		c := *m
		c.Layers = slices.Clone(m.Layers)
		for k := range c.Layers {
			l := &c.Layers[k]
			l.W = cloneRows(l.W)
			l.R = cloneRows(l.R)
		}
		f(&c)
		return &c
	}
	wide := rlccInputs()
	wide[1].Max = math.MaxInt32
	wide[1].Frac = -8 // o up to 2^39: the lanes cannot hold the dense layer's worst case
	for _, c := range []struct {
		name   string
		m      *model.Model
		inputs []quantize.Input
		calib  [][]float64
		want   string
	}{
		{"NaN recurrent weight", with(func(m *model.Model) { m.Layers[1].R[3][2] = math.NaN() }), rlccInputs(), rows, "layer 1 recurrent weight [3][2] is NaN"},
		{"Inf weight", with(func(m *model.Model) { m.Layers[0].W[0][1] = math.Inf(1) }), rlccInputs(), rows, "layer 0 weight [0][1] is +Inf"},
		{"no dense before", with(func(m *model.Model) { m.Layers = m.Layers[1:] }), rlccInputs(), rows, "takes dense(relu) -> lstm -> dense(tanh)"},
		{"sigmoid output", with(func(m *model.Model) { m.Layers[2].Act = model.ActSigmoid }), rlccInputs(), rows, "the model is [dense(relu) 4->12 lstm 12->12 dense(sigmoid) 12->1]"},
		{"calibration width", m, rlccInputs(), [][]float64{{1, 2, 3}}, "calibration row 0 has 3 values, the model takes 4"},
		{"empty calibration", m, rlccInputs(), nil, "empty calibration set"},
		{"ranges too wide", m, wide, rows, "does not fit a 21-bit lane"},
	} {
		_, err := quantize.LSTM(c.m, c.inputs, c.calib, quantize.LSTMOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

func cloneRows(r [][]float64) [][]float64 {
	out := make([][]float64, len(r))
	for i := range r {
		out[i] = slices.Clone(r[i])
	}
	return out
}

// FuzzLSTMLanes checks the lane proof: for any inputs and any state bytes, every channel's
// sum computed the firmware's way (three channels to a wrapping uint64, LaneLayer.PackedSums)
// equals its exact sum, in the dense layer and in the gates. The seeds include the range
// corners; the fuzzer draws raw int32 inputs anywhere (Step clamps them) and any state.
func FuzzLSTMLanes(f *testing.F) {
	_, ir, _ := shippedLSTM(f, 2000)
	preW, gateW := ir.Pre.Pack(), ir.Gates.Pack()
	ins := ir.Inputs
	f.Add(ins[0].Min, ins[1].Min, ins[2].Min, ins[3].Min, []byte{})
	f.Add(ins[0].Max, ins[1].Max, ins[2].Max, ins[3].Max, bytes.Repeat([]byte{0x80}, 24))
	f.Add(ins[0].Max, ins[1].Min, ins[2].Max, ins[3].Max, bytes.Repeat([]byte{0x7f}, 24))
	f.Add(int32(0), int32(65536), int32(-1), int32(1<<30), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, x0, x1, x2, x3 int32, sb []byte) {
		st := make([]byte, ir.StateBytes())
		copy(st, sb)
		x := []int32{x0, x1, x2, x3}
		v := make([]int64, len(x))
		for i, in := range ins {
			c := int64(min(max(x[i], in.Min), in.Max))
			v[i] = c
			if s := ir.InShift[i]; s > 0 {
				v[i] = (c + 1<<(s-1)) >> s
			}
		}
		pre := ir.Pre.PackedSums(preW, v)
		gin := make([]int64, 0, ir.Gates.In)
		for j := range ir.Pre.Out {
			if want := ir.Pre.Sum(j, v); pre[j] != want {
				t.Fatalf("x %v: dense channel %d: packed %d, exact %d", x, j, pre[j], want)
			}
			gin = append(gin, min(max(pre[j]>>ir.Pre.Shift[j], 0), quantize.PreMax))
		}
		for k := range ir.Hidden {
			gin = append(gin, int64(int8(st[k])))
		}
		gates := ir.Gates.PackedSums(gateW, gin)
		for r := range ir.Gates.Out {
			if want := ir.Gates.Sum(r, gin); gates[r] != want {
				t.Fatalf("x %v state %x: gate %d: packed %d, exact %d", x, st, r, gates[r], want)
			}
		}
	})
}

// A ReLU unit that no input in the declared ranges turns on is proven off (LaneLayer.Act is
// [0, 0]) and its gate weights are zero; every x_t lies in its proven range, at the range
// corners and at random raw inputs, and a unit the inputs can turn on keeps its weights.
func TestLSTMDeadUnits(t *testing.T) {
	m, _, rows := shippedLSTM(t, 2000)
	c := *m
	c.Layers = slices.Clone(m.Layers)
	pre := &c.Layers[0]
	pre.B = slices.Clone(pre.B)
	if pre.B == nil {
		pre.B = make([]float64, pre.Out)
	}
	pre.B[0] = -1e3 // beyond what the inputs' worst case can lift
	ir, err := quantize.LSTM(&c, rlccInputs(), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := ir.Pre.Act(0); a != (quantize.Interval{}) {
		t.Fatalf("unit 0 with bias -1000: proven x_t %v, want [0, 0]", a)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ins := ir.Inputs
	var dead, live int
	for j := range ir.Pre.Out {
		a := ir.Pre.Act(j)
		nonzero := false
		for r := range ir.Gates.Out {
			nonzero = nonzero || ir.Gates.W[r][j] != 0
		}
		if a.Hi == 0 && nonzero || a.Hi > 0 && !nonzero {
			t.Errorf("unit %d: proven x_t %v, some gate weight nonzero %v", j, a, nonzero)
		}
		if a.Hi == 0 {
			dead++
		} else {
			live++
		}
		for k := range 2000 {
			v := make([]int64, len(ins))
			for i, in := range ins {
				x := int64(in.Min) + rng.Int64N(int64(in.Max)-int64(in.Min)+1)
				if k < 1<<len(ins) { // the corners first
					x = int64(in.Min)
					if k>>i&1 != 0 {
						x = int64(in.Max)
					}
				}
				v[i] = x
				if s := ir.InShift[i]; s > 0 {
					v[i] = (x + 1<<(s-1)) >> s
				}
			}
			if xt := min(max(ir.Pre.Sum(j, v)>>ir.Pre.Shift[j], 0), quantize.PreMax); xt < a.Lo || xt > a.Hi {
				t.Fatalf("unit %d: inputs %v give x_t %d outside its proven %v", j, v, xt, a)
			}
		}
	}
	if dead == 0 || live == 0 {
		t.Errorf("%d dead and %d live units: the test needs both", dead, live)
	}
}
