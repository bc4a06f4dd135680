package model

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// dyadic is a random k/8, k in [-8, 8]: products and sums of a few stay exact in float64, so
// a permuted network's sums, in another order, are equal to the bit.
func dyadic(r *rand.Rand) float64 { return float64(r.IntN(17)-8) / 8 }

func dyadicMatrix(r *rand.Rand, rows, cols int) [][]float64 {
	w := make([][]float64, rows)
	for i := range w {
		w[i] = make([]float64, cols)
		for j := range w[i] {
			w[i][j] = dyadic(r)
		}
	}
	return w
}

func dyadicVector(r *rand.Rand, n int) []float64 { return dyadicMatrix(r, 1, n)[0] }

// permuteModels are one model of each kind over 5 inputs: dense, LSTM first, dense then LSTM,
// and trees.
func permuteModels(r *rand.Rand) []*Model {
	in := []string{"x0", "x1", "x2", "x3", "x4"}
	dense := func(i, o int, act Activation) Layer {
		return Layer{Op: OpDense, In: i, Out: o, W: dyadicMatrix(r, o, i), B: dyadicVector(r, o), Act: act}
	}
	lstm := func(i, o int) Layer {
		return Layer{Op: OpLSTM, In: i, Out: o, W: dyadicMatrix(r, 4*o, i), R: dyadicMatrix(r, 4*o, o), B: dyadicVector(r, 4*o), RB: dyadicVector(r, 4*o)}
	}
	var trees []Tree
	for range 6 {
		var nodes []Node
		for k := range 7 {
			nodes = append(nodes, Node{Feature: r.IntN(5), Threshold: dyadic(r), Cmp: Cmp(r.IntN(3)), Left: 2*k + 1, Right: 2*k + 2, DefaultLeft: k%2 == 0})
		}
		for range 8 {
			nodes = append(nodes, Node{Leaf: true, Value: dyadic(r)})
		}
		trees = append(trees, Tree{Nodes: nodes})
	}
	return []*Model{
		{Name: "mlp", Inputs: in, Layers: []Layer{dense(5, 6, ActReLU), dense(6, 1, ActTanh)}},
		{Name: "lstm", Inputs: in, Layers: []Layer{lstm(5, 3), dense(3, 1, ActTanh)}},
		{Name: "dense-lstm", Inputs: in, Layers: []Layer{dense(5, 4, ActReLU), lstm(4, 3), dense(3, 1, ActIdentity)}},
		{Name: "trees", Inputs: in, Ensemble: &Ensemble{Base: 0.5, Trees: trees}},
	}
}

func TestPermuteInputsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	perm := []int{3, 0, 4, 1, 2}
	for _, m := range permuteModels(r) {
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		before, _ := Marshal(m)
		p, err := PermuteInputs(m, perm)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%s permuted: %v", m.Name, err)
		}
		if after, _ := Marshal(m); string(after) != string(before) {
			t.Errorf("%s: PermuteInputs changed its argument", m.Name)
		}
		if want := []string{"x1", "x3", "x4", "x0", "x2"}; !reflect.DeepEqual(p.Inputs, want) {
			t.Errorf("%s: inputs %q, want %q", m.Name, p.Inputs, want)
		}
		st, pst := m.NewState(), p.NewState()
		differ := 0
		for k := range 300 {
			x := make([]float64, 5)
			for i := range x {
				x[i] = float64(r.IntN(17)-8) / 4
			}
			want := m.Eval(st, x)
			got := p.Eval(pst, PermuteRow(x, perm))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s row %d %v: permuted %v, original %v", m.Name, k, x, got, want)
			}
			// The unpermuted row must not give the same answer everywhere: the test can fail.
			if !reflect.DeepEqual(p.Eval(p.NewState(), x), m.Eval(m.NewState(), x)) {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("%s: the permuted model gives the original's output on unpermuted rows too; the test shows nothing", m.Name)
		}
	}
}

func TestPermuteInputsRefuses(t *testing.T) {
	m := permuteModels(rand.New(rand.NewPCG(3, 4)))[0]
	for _, perm := range [][]int{{0, 1, 2, 3}, {0, 1, 2, 3, 3}, {0, 1, 2, 3, 5}, {-1, 1, 2, 3, 4}} {
		if _, err := PermuteInputs(m, perm); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("PermuteInputs(%v) = %v, want a one-line error", perm, err)
		}
	}
}

// PermuteRow is x in the order PermuteInputs(m, perm) reads: x'[perm[i]] = x[i].
func PermuteRow(x []float64, perm []int) []float64 {
	y := make([]float64, len(x))
	for i, p := range perm {
		y[p] = x[i]
	}
	return y
}
