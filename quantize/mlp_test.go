package quantize_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// rlccInputs are the RL-CC handler's declared Q16 input formats.
func rlccInputs() []quantize.Input {
	return quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
}

// rlccStates are n RL-CC states of the default sampler, row by row (distill's sample).
func rlccStates(t testing.TB, n int, seed uint64) [][]float64 {
	t.Helper()
	next, err := rlcc.DefaultSampler.Stream(seed)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, len(rlcc.Names))
		next(rows[i])
	}
	return rows
}

func teacherMLP(t *testing.T, opt quantize.MLPOptions) (*model.Model, *quantize.MLPIR, [][]float64) {
	t.Helper()
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	rows := rlccStates(t, 20000, 1)
	ir, err := quantize.MLP(m, rlccInputs(), rows, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m, ir, rows
}

// TestMLPTeacher quantizes the shipped teacher in each configuration and reports its
// fidelity against the float model on the calibration set. The shipped configuration (int16
// weights and activations, interpolated output tanh) must meet the max |Δy| ≤ 2/128;
// its flip rate is reported (the target is 0.1%).
func TestMLPTeacher(t *testing.T) {
	for _, c := range []struct {
		name   string
		opt    quantize.MLPOptions
		maxAbs float64 // a regression bound, not a target
	}{
		{"int16/channel", quantize.MLPOptions{WeightBits: 16, ChannelScales: true}, 2.0 / 128},
		{"int16", quantize.MLPOptions{WeightBits: 16}, 2.0 / 128},
		{"int16/tanh8", quantize.MLPOptions{WeightBits: 16, TanhBits: 8}, 0.02},
		{"int8w/int16act", quantize.MLPOptions{}, 0.2},
		{"int8", quantize.MLPOptions{ActBits: 8, TanhBits: 8}, 1},
	} {
		_, ir, _ := teacherMLP(t, c.opt)
		f := ir.Fidelity
		t.Logf("%s: %d rows, max |dy| %.5f (%.2f/128), flips %.3f%%", c.name, f.Rows, f.MaxAbs, f.MaxAbs*128, 100*f.Flips)
		if f.MaxAbs > c.maxAbs {
			t.Errorf("%s: max |dy| %g > %g", c.name, f.MaxAbs, c.maxAbs)
		}
		if ir.Out.Lo < -65536 || ir.Out.Hi > 65536 {
			t.Errorf("%s: output range %v outside Q16 [-1, 1]", c.name, ir.Out)
		}
	}
}

// TestMLPEvalInRange: on random raw vectors (and out-of-range ones, which clamp), Eval stays
// in the proven output range, and every accumulator in its proven range.
func TestMLPEvalInRange(t *testing.T) {
	_, ir, _ := teacherMLP(t, quantize.MLPOptions{WeightBits: 16})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := make([]int32, len(ir.Inputs))
		for i := range x {
			x[i] = int32(rng.Uint32())
		}
		if y := ir.Eval(x); !ir.Out.Contains(int64(y)) {
			t.Fatalf("%v: %d outside %v", x, y, ir.Out)
		}
	}
	if !strings.Contains(ir.Dump(), "acc int64") {
		t.Errorf("int16 weights: no int64 accumulator in the dump:\n%s", ir.Dump())
	}
}

func TestMLPErrors(t *testing.T) {
	dense := func(in, out int, act model.Activation, w float64) model.Layer {
		W := make([][]float64, out)
		for j := range W {
			W[j] = make([]float64, in)
			for i := range W[j] {
				W[j][i] = w
			}
		}
		return model.Layer{Op: model.OpDense, In: in, Out: out, W: W, Act: act}
	}
	mk := func(ls ...model.Layer) *model.Model {
		return &model.Model{Version: model.NativeVersion, Name: "e", Inputs: []string{"a", "b"}, Layers: ls}
	}
	ins := []quantize.Input{{Name: "a", Frac: 16, Min: -65536, Max: 65536}, {Name: "b", Frac: 16, Min: -65536, Max: 65536}}
	cal := [][]float64{{0.5, -0.5}, {1, 1}}
	nan := dense(2, 1, model.ActTanh, 1)
	nan.W[0][1] = math.NaN()
	inf := dense(2, 1, model.ActTanh, 1)
	inf.B = []float64{math.Inf(1)}
	lstm := dense(2, 1, model.ActTanh, 1)
	lstm.Op = model.OpLSTM
	huge := []quantize.Input{{Name: "a", Frac: 0, Min: math.MinInt32, Max: math.MaxInt32}, {Name: "b", Frac: 0, Min: math.MinInt32, Max: math.MaxInt32}}
	for _, c := range []struct {
		name string
		m    *model.Model
		ins  []quantize.Input
		cal  [][]float64
		opt  quantize.MLPOptions
		want string
	}{
		{"nan weight", mk(nan), ins, cal, quantize.MLPOptions{}, "weight [0][1] is NaN"},
		{"inf bias", mk(inf), ins, cal, quantize.MLPOptions{}, "bias 0 is +Inf"},
		{"sigmoid", mk(dense(2, 1, model.ActSigmoid, 1)), ins, cal, quantize.MLPOptions{}, "activation sigmoid is not supported"},
		{"lstm", mk(lstm), ins, cal, quantize.MLPOptions{}, "dense layers only"},
		{"calibration width", mk(dense(2, 1, model.ActTanh, 1)), ins, [][]float64{{1, 2}, {1, 2, 3}}, quantize.MLPOptions{}, "calibration row 1 has 3 values, the model takes 2"},
		{"no calibration", mk(dense(2, 1, model.ActTanh, 1)), ins, nil, quantize.MLPOptions{}, "empty calibration set"},
		{"inputs", mk(dense(2, 1, model.ActTanh, 1)), ins[:1], cal, quantize.MLPOptions{}, "1 input formats"},
		{"two outputs", mk(dense(2, 2, model.ActTanh, 1)), ins, cal, quantize.MLPOptions{}, "2 outputs"},
		{"chain", mk(dense(2, 3, model.ActReLU, 1), dense(2, 1, model.ActTanh, 1)), ins, cal, quantize.MLPOptions{}, "does not chain"},
		{"act bits", mk(dense(2, 1, model.ActTanh, 1)), ins, cal, quantize.MLPOptions{ActBits: 12}, "activation width 12"},
		{"weight bits", mk(dense(2, 1, model.ActTanh, 1)), ins, cal, quantize.MLPOptions{WeightBits: 4}, "weight width 4"},
		{"int64 overflow", mk(dense(2, 1, model.ActIdentity, 1)), huge, cal, quantize.MLPOptions{WeightBits: 16, OutFrac: 30}, "does not fit int32"},
		{"trees", &model.Model{Version: model.NativeVersion, Inputs: []string{"a"}, Ensemble: &model.Ensemble{}}, ins, cal, quantize.MLPOptions{}, "needs a dense network"},
	} {
		_, err := quantize.MLP(c.m, c.ins, c.cal, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", c.name, err)
		}
	}
}
