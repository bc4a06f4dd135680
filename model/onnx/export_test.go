package onnx

import (
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// exportNet is the RL-CC MLP's shape with float32 weights, biases on the hidden layers and
// every activation Encode writes.
func exportNet(seed uint64) *model.Model {
	r := rand.New(rand.NewPCG(seed, 1))
	w := func(out, in int) [][]float64 {
		m := make([][]float64, out)
		for i := range m {
			for range in {
				m[i] = append(m[i], float64(float32(r.NormFloat64())))
			}
		}
		return m
	}
	return &model.Model{Version: model.NativeVersion, Name: "export", Inputs: []string{"a_prev", "o", "a_prev2", "o_prev"}, Doc: "a test network",
		Layers: []model.Layer{
			{Op: model.OpDense, In: 4, Out: 12, W: w(12, 4), B: w(1, 12)[0], Act: model.ActReLU},
			{Op: model.OpDense, In: 12, Out: 12, W: w(12, 12), Act: model.ActLeakyReLU, Alpha: 0.125},
			{Op: model.OpDense, In: 12, Out: 6, W: w(6, 12), Act: model.ActSigmoid},
			{Op: model.OpDense, In: 6, Out: 1, W: w(1, 6), Act: model.ActTanh},
		}}
}

// roundTrip wants Encode's file of m to read back through Parse as the same network: names,
// layers, weights, and outputs bit for bit along a sequence, the state (if any) carried.
func roundTrip(t *testing.T, m *model.Model) {
	t.Helper()
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Inputs, m.Inputs) || len(back.Layers) != len(m.Layers) {
		t.Fatalf("read back %v with %d layers", back.Inputs, len(back.Layers))
	}
	for k := range m.Layers {
		a, b := m.Layers[k], back.Layers[k]
		if a.Op != b.Op || !reflect.DeepEqual(a.W, b.W) || !reflect.DeepEqual(a.R, b.R) || !reflect.DeepEqual(a.B, b.B) ||
			!reflect.DeepEqual(a.RB, b.RB) || a.Act != b.Act || a.Alpha != b.Alpha {
			t.Errorf("layer %d (%s) differs after the round trip", k, a.Op)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	sa, sb := m.NewState(), back.NewState()
	for range 1000 {
		x := []float64{0.8 + 0.4*r.Float64(), 3 * r.NormFloat64(), 0.8 + 0.4*r.Float64(), 3 * r.NormFloat64()}
		if a, b := m.Eval(sa, x)[0], back.Eval(sb, x)[0]; math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("x %v: %v before, %v after", x, a, b)
		}
	}
	again, _ := Encode(m)
	if string(again) != string(data) {
		t.Error("two encodings of one model differ")
	}
}

// A dense network with every activation Encode writes round-trips.
func TestEncodeRoundTrip(t *testing.T) { roundTrip(t, exportNet(3)) }

func TestEncodeRefuses(t *testing.T) {
	m := exportNet(4)
	m.Layers[1].W[2][3] = 0.1 // not a float32 value
	if _, err := Encode(m); err == nil || !strings.Contains(err.Error(), "layer 1 weights: 0.1 is not a float32") {
		t.Errorf("float64 weight: %v", err)
	}
	m = exportNet(4)
	m.Layers[0].Act, m.Layers[0].Lo, m.Layers[0].Hi = model.ActClip, 0, 6
	if _, err := Encode(m); err == nil || !strings.Contains(err.Error(), "clip is not written") {
		t.Errorf("clip: %v", err)
	}
}

// An LSTM policy (torch's export in testdata) round-trips, its state carried along.
func TestEncodeLSTMRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, m)
}

// The ONNX checkpoints in testdata, which onnx's own checker accepted
// (testdata/gen/check_onnx.py), are what Encode writes for their nicc JSON twins, byte for byte.
func TestEncodeMatchesCheckedFiles(t *testing.T) {
	for _, name := range []string{"rlcc_adpg", "rlcc_adpg_lstm", "rlcc_train"} {
		m, err := model.Load("../../testdata/models/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("../../testdata/models/" + name + ".onnx")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: Encode differs from the checked %s.onnx", name, name)
		}
	}
}
