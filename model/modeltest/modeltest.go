// Package modeltest builds synthetic models of any size for tests and benchmarks: tree
// ensembles shaped like a boosting library's (complete trees whose every split is reachable)
// and dense networks, deterministic for a seed. Large models are made on the fly rather than
// committed; testdata/gen/bigmodels.go writes them to files for the command line.
package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/nicc-dev/nicc/model"
)

// RLCCInputs are the RL-CC handler's input names, in its order.
var RLCCInputs = []string{"a_prev", "o", "a_prev2", "o_prev"}

// ThresholdStep is the grid thresholds are drawn on: distinct thresholds of a feature are at
// least this far apart, so any fixed-point format that can represent [-1, 1] to 2^-12 tells
// them apart.
const ThresholdStep = 1.0 / 4096

// Trees is an ensemble of trees complete to depth, splitting x < t (as XGBoost does) on a
// random feature of inputs at a threshold on the ThresholdStep grid inside the interval the
// path to the split leaves that feature (starting from [-1, 1]), so both sides of every split
// are reachable; leaves are multiples of 10^-6 in ±0.01. Nodes are in breadth-first order.
func Trees(name string, inputs []string, trees, depth int, seed uint64) *model.Model {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c74))
	e := &model.Ensemble{Float32: true}
	n := 1<<(depth+1) - 1
	type span struct{ lo, hi int } // open interval of grid steps a feature can still take
	for range trees {
		nodes := make([]model.Node, n)
		spans := make([][]span, n)
		spans[0] = make([]span, len(inputs))
		for f := range spans[0] {
			spans[0][f] = span{-4096, 4096}
		}
		for i := range nodes {
			if 2*i+1 >= n {
				nodes[i] = model.Node{Leaf: true, Value: float64(rng.IntN(20001)-10000) / 1e6}
				continue
			}
			s := spans[i]
			// A feature with room for a split: at least one grid point strictly inside.
			f := rng.IntN(len(inputs))
			for s[f].hi-s[f].lo < 2 {
				f = (f + 1) % len(inputs)
			}
			k := s[f].lo + 1 + rng.IntN(s[f].hi-s[f].lo-1)
			nodes[i] = model.Node{Feature: f, Threshold: float64(k) * ThresholdStep, Cmp: model.CmpLT,
				Left: 2*i + 1, Right: 2*i + 2}
			l, r := append([]span(nil), s...), append([]span(nil), s...)
			// x < k·step goes left: a later split at grid point j has both sides reachable
			// when j < k on the left and j > k on the right.
			l[f].hi, r[f].lo = k, k
			spans[2*i+1], spans[2*i+2] = l, r
		}
		e.Trees = append(e.Trees, model.Tree{Nodes: nodes})
	}
	return &model.Model{Version: model.NativeVersion, Name: name, Inputs: inputs, Ensemble: e,
		Doc: fmt.Sprintf("synthetic: %d trees of depth %d, seed %d (model/modeltest)", trees, depth, seed)}
}

// MLP is a dense network of the given widths (widths[0] inputs, named inputs), relu hidden
// layers and a tanh output, weights normal with deviation 1/√in and no biases, like the RL-CC
// teacher's initialisation.
func MLP(name string, inputs []string, widths []int, seed uint64) *model.Model {
	rng := rand.New(rand.NewPCG(seed, 0x6d6c70))
	m := &model.Model{Version: model.NativeVersion, Name: name, Inputs: inputs,
		Doc: fmt.Sprintf("synthetic: dense %v, seed %d (model/modeltest)", widths, seed)}
	for k := 1; k < len(widths); k++ {
		in, out := widths[k-1], widths[k]
		w := make([][]float64, out)
		for j := range w {
			w[j] = make([]float64, in)
			for i := range w[j] {
				w[j][i] = rng.NormFloat64() / math.Sqrt(float64(in))
			}
		}
		act := model.ActReLU
		if k == len(widths)-1 {
			act = model.ActTanh
		}
		m.Layers = append(m.Layers, model.Layer{Op: model.OpDense, In: in, Out: out, W: w, Act: act})
	}
	return m
}

// Save writes m as compact native JSON: model.Save indents, and 2000 trees of depth 8 would
// pass the loader's 64 MiB limit.
func Save(path string, m *model.Model) error {
	if err := m.Validate(); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	// A split's default_left and missing are their zero values when absent.
	return os.WriteFile(path, bytes.ReplaceAll(b.Bytes(), []byte(`,"default_left":false,"missing":"nan"`), nil), 0o644)
}
