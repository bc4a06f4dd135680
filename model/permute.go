package model

import (
	"fmt"
	"slices"
)

// PermuteInputs is m with its inputs reordered: input i of m is input perm[i] of the result,
// which reads the same values from the permuted row (x'[perm[i]] = x[i]) and computes the same
// function. It is pure reindexing: the first layer's input weight columns (a dense or an LSTM
// layer's W), every split's feature index, and the input names. m is not changed; perm must be
// a permutation of 0..NumInputs-1.
func PermuteInputs(m *Model, perm []int) (*Model, error) {
	n := m.NumInputs()
	if len(perm) != n {
		return nil, fmt.Errorf("permutation of %d inputs for model %q with %d", len(perm), m.Name, n)
	}
	seen := make([]bool, n)
	for _, p := range perm {
		if p < 0 || p >= n || seen[p] {
			return nil, fmt.Errorf("%v is not a permutation of model %q's %d inputs", perm, m.Name, n)
		}
		seen[p] = true
	}
	out := *m
	out.Inputs = make([]string, n)
	for i, p := range perm {
		out.Inputs[p] = m.Inputs[i]
	}
	if len(m.Layers) > 0 {
		out.Layers = slices.Clone(m.Layers)
		first := &out.Layers[0]
		w := make([][]float64, len(first.W))
		for r, row := range first.W {
			if len(row) != n {
				return nil, fmt.Errorf("model %q: layer 1 row %d has %d weights for %d inputs", m.Name, r, len(row), n)
			}
			w[r] = make([]float64, n)
			for i, p := range perm {
				w[r][p] = row[i]
			}
		}
		first.W = w
	}
	if m.Ensemble != nil {
		e := *m.Ensemble
		e.Trees = make([]Tree, len(m.Ensemble.Trees))
		for t, tr := range m.Ensemble.Trees {
			nodes := slices.Clone(tr.Nodes)
			for k := range nodes {
				if nodes[k].Leaf {
					continue
				}
				if f := nodes[k].Feature; f < 0 || f >= n {
					return nil, fmt.Errorf("model %q: tree %d node %d splits on feature %d of %d", m.Name, t, k, f, n)
				}
				nodes[k].Feature = perm[nodes[k].Feature]
			}
			e.Trees[t] = Tree{Nodes: nodes}
		}
		out.Ensemble = &e
	}
	return &out, nil
}
