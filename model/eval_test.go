package model

import (
	"math"
	"testing"
)

func TestActivations(t *testing.T) {
	cases := []struct {
		act      Activation
		in, want float64
	}{
		{ActIdentity, -3, -3},
		{ActReLU, -3, 0},
		{ActReLU, 2, 2},
		{ActTanh, 0.5, 0.46211715726000974},
		{ActSigmoid, 0, 0.5},
		{ActSigmoid, 2, 0.8807970779778823},
		{ActLeakyReLU, -3, -0.3},
		{ActLeakyReLU, 3, 3},
		{ActClip, -3, -1},
		{ActClip, 0.25, 0.25},
		{ActClip, 9, 2},
	}
	for _, c := range cases {
		m := &Model{Inputs: []string{"x"}, Layers: []Layer{{Op: OpDense, In: 1, Out: 1, W: [][]float64{{1}}, Act: c.act, Alpha: 0.1, Lo: -1, Hi: 2}}}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := m.Eval(nil, []float64{c.in})[0]; math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s(%v) = %v, want %v", c.act, c.in, got, c.want)
		}
	}
}

func TestDenseBias(t *testing.T) {
	m := &Model{Inputs: []string{"a", "b"}, Layers: []Layer{{Op: OpDense, In: 2, Out: 2, W: [][]float64{{1, 2}, {3, 4}}, B: []float64{0.5, -100}}}}
	got := m.Eval(nil, []float64{1, 10})
	if got[0] != 21.5 || got[1] != -57 {
		t.Errorf("got %v, want [21.5 -57]", got)
	}
}

// TestLSTMGateOrder drives one gate at a time to saturation, so each of i, f, g, o shows up
// in the result only if it sits at its PyTorch row block.
func TestLSTMGateOrder(t *testing.T) {
	big := 50.0 // sigmoid(50) = 1, tanh(50) = 1 in float64
	lstm := func(b []float64) *Model {
		return &Model{Inputs: []string{"x"}, Layers: []Layer{{Op: OpLSTM, In: 1, Out: 1,
			W: [][]float64{{0}, {0}, {0}, {0}}, R: [][]float64{{0}, {0}, {0}, {0}}, B: b}}}
	}
	// i=1, f=1, g=1, o=1 from c=0.5: c' = 1*0.5 + 1*1 = 1.5, h' = tanh(1.5).
	m := lstm([]float64{big, big, big, big})
	st := m.NewState()
	st.C[0] = 0.5
	h := m.Eval(st, []float64{0})[0]
	if st.C[0] != 1.5 || h != math.Tanh(1.5) {
		t.Errorf("all gates open: c=%v h=%v", st.C[0], h)
	}
	// f closed: c' = 0*0.5 + 1*1 = 1.
	m = lstm([]float64{big, -big, big, big})
	st = m.NewState()
	st.C[0] = 0.5
	m.Eval(st, []float64{0})
	if math.Abs(st.C[0]-1) > 1e-15 {
		t.Errorf("forget gate closed: c=%v, want 1", st.C[0])
	}
	// g = -1: c' = 0.5 - 1 = -0.5.
	m = lstm([]float64{big, big, -big, big})
	st = m.NewState()
	st.C[0] = 0.5
	m.Eval(st, []float64{0})
	if math.Abs(st.C[0]+0.5) > 1e-15 {
		t.Errorf("cell input -1: c=%v, want -0.5", st.C[0])
	}
	// o closed: h' = 0.
	m = lstm([]float64{big, big, big, -big})
	st = m.NewState()
	if h := m.Eval(st, []float64{0})[0]; math.Abs(h) > 1e-15 {
		t.Errorf("output gate closed: h=%v, want 0", h)
	}
	// The recurrent path reads h: R on the g row with h=1 gives g = tanh(1).
	m = lstm([]float64{big, -big, 0, big})
	m.Layers[0].R[2][0] = 1
	st = m.NewState()
	st.H[0] = 1
	m.Eval(st, []float64{0})
	if math.Abs(st.C[0]-math.Tanh(1)) > 1e-15 {
		t.Errorf("recurrent weight: c=%v, want tanh(1)", st.C[0])
	}
}

func TestSplitSemantics(t *testing.T) {
	t32 := float64(float32(0.1))
	nan := math.NaN()
	cases := []struct {
		name string
		node Node
		x    float64
		f32  bool
		want bool
	}{
		{"lt below", Node{Cmp: CmpLT, Threshold: 1}, 0.5, false, true},
		{"lt equal", Node{Cmp: CmpLT, Threshold: 1}, 1, false, false},
		{"le equal", Node{Cmp: CmpLE, Threshold: 1}, 1, false, true},
		{"gt equal", Node{Cmp: CmpGT, Threshold: 1}, 1, false, false},
		{"gt above", Node{Cmp: CmpGT, Threshold: 1}, 1.5, false, true},
		// 0.1 < float32(0.1) in float64, but they are equal in float32.
		{"f64 compare", Node{Cmp: CmpLT, Threshold: t32}, 0.1, false, true},
		{"f32 compare", Node{Cmp: CmpLT, Threshold: t32}, 0.1, true, false},
		{"nan default left", Node{Cmp: CmpLT, Threshold: 1, DefaultLeft: true, Missing: MissingNaN}, nan, false, true},
		{"nan default right", Node{Cmp: CmpLT, Threshold: 1, Missing: MissingNaN}, nan, false, false},
		{"zero type tiny", Node{Cmp: CmpLE, Threshold: -1, DefaultLeft: true, Missing: MissingZero}, 1e-36, false, true},
		{"zero type nan", Node{Cmp: CmpLE, Threshold: -1, DefaultLeft: true, Missing: MissingZero}, nan, false, true},
		{"zero type real", Node{Cmp: CmpLE, Threshold: -1, DefaultLeft: true, Missing: MissingZero}, 1e-30, false, false},
		{"none type nan is zero", Node{Cmp: CmpLE, Threshold: 0, Missing: MissingNone}, nan, false, true},
		{"none type nan is zero right", Node{Cmp: CmpLE, Threshold: -0.5, DefaultLeft: true, Missing: MissingNone}, nan, false, false},
	}
	for _, c := range cases {
		if got := c.node.GoesLeft(c.x, c.f32); got != c.want {
			t.Errorf("%s: GoesLeft(%v) = %v, want %v", c.name, c.x, got, c.want)
		}
	}
}

func TestEnsembleSums(t *testing.T) {
	stump := func(thr, l, r float64) Tree {
		return Tree{Nodes: []Node{{Feature: 0, Threshold: thr, Cmp: CmpLE, Left: 1, Right: 2}, {Leaf: true, Value: l}, {Leaf: true, Value: r}}}
	}
	e := &Ensemble{Base: 0.25, Trees: []Tree{stump(0, 1, 2), stump(5, 10, 20)}}
	for _, c := range []struct{ x, want float64 }{{-1, 11.25}, {3, 12.25}, {9, 22.25}} {
		if got := e.Eval([]float64{c.x}); got != c.want {
			t.Errorf("x=%v: %v, want %v", c.x, got, c.want)
		}
	}
	e.Transform, e.SigmoidScale = TransformSigmoid, 0.5
	if got, want := e.Eval([]float64{-1}), 1/(1+math.Exp(-0.5*11.25)); got != want {
		t.Errorf("sigmoid: %v, want %v", got, want)
	}
}
