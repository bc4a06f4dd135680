// Package distill turns a teacher policy into gradient-boosted trees that fit the NIC: state
// sources, teacher labels, datasets, and the tree trainer (Train).
package distill

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Dataset is a training set in column-major float64 (X[feature][row]) with targets Y.
// Names[f] names feature f and becomes the trained model's Inputs.
type Dataset struct {
	Names []string
	X     [][]float64
	Y     []float64
}

// Rows is the number of rows (len(Y)).
func (d *Dataset) Rows() int {
	if d == nil {
		return 0
	}
	return len(d.Y)
}

// RowMajor is X as rows: RowMajor()[r][f] = X[f][r].
func (d *Dataset) RowMajor() [][]float64 {
	if len(d.X) == 0 {
		return nil
	}
	rows := make([][]float64, len(d.X[0]))
	for r := range rows {
		rows[r] = make([]float64, len(d.X))
		for f := range d.X {
			rows[r][f] = d.X[f][r]
		}
	}
	return rows
}

// Check reports the first structural problem of d: no features, no rows, a feature column whose
// length differs from len(Y), a Names list of the wrong width, or a NaN or infinite value.
func (d *Dataset) Check() error {
	if err := d.checkShape(); err != nil {
		return err
	}
	for f, col := range d.X {
		if r := firstNonFinite(col); r >= 0 {
			return fmt.Errorf("distill: feature %d (%s) row %d is %v", f, d.Names[f], r, col[r])
		}
	}
	if r := firstNonFinite(d.Y); r >= 0 {
		return fmt.Errorf("distill: target row %d is %v", r, d.Y[r])
	}
	return nil
}

// checkShape is Check without the scan for NaN and infinite values.
func (d *Dataset) checkShape() error {
	if d == nil {
		return fmt.Errorf("distill: dataset is nil")
	}
	if len(d.X) == 0 {
		return fmt.Errorf("distill: dataset has no features")
	}
	if len(d.Names) != len(d.X) {
		return fmt.Errorf("distill: dataset has %d names for %d feature columns", len(d.Names), len(d.X))
	}
	n := len(d.Y)
	if n == 0 {
		return fmt.Errorf("distill: dataset is empty")
	}
	for f, col := range d.X {
		if len(col) != n {
			return fmt.Errorf("distill: feature %d (%s) has %d rows, targets have %d", f, d.Names[f], len(col), n)
		}
	}
	return nil
}

// firstNonFinite is the index of the first NaN or infinity in v, or -1.
func firstNonFinite(v []float64) int {
	// v·0 is 0 for a finite v and NaN otherwise: a block's sum says whether to look closer,
	// without a branch per value.
	const block = 1024
	for lo := 0; lo < len(v); lo += block {
		s := 0.0
		for _, x := range v[lo:min(lo+block, len(v))] {
			s += x * 0
		}
		if s == 0 {
			continue
		}
		for r := lo; ; r++ {
			if math.IsNaN(v[r]) || math.IsInf(v[r], 0) {
				return r
			}
		}
	}
	return -1
}

// Split divides d into a training part and a held-out part of round(heldOut·Rows()) rows,
// heldOut in [0, 1]. Which rows are held out is a pseudo-random choice fixed by seed; both parts
// keep d's row order. The result is deterministic for a given (d, heldOut, seed).
func (d *Dataset) Split(heldOut float64, seed uint64) (train, test *Dataset) {
	n := d.Rows()
	if !(heldOut >= 0) {
		heldOut = 0
	}
	heldOut = min(heldOut, 1)
	k := int(math.Round(heldOut * float64(n)))
	rng := rand.New(rand.NewPCG(seed, 0x6e696363_64697374))
	perm := rng.Perm(n)
	isTest := make([]bool, n)
	for _, r := range perm[:k] {
		isTest[r] = true
	}
	train, test = d.subset(isTest, false, n-k), d.subset(isTest, true, k)
	return train, test
}

// subset is the rows r with mask[r] == want, in order; size is their count.
func (d *Dataset) subset(mask []bool, want bool, size int) *Dataset {
	s := &Dataset{Names: append([]string(nil), d.Names...), X: make([][]float64, len(d.X)), Y: make([]float64, 0, size)}
	for f := range d.X {
		s.X[f] = make([]float64, 0, size)
	}
	for r, m := range mask {
		if m != want {
			continue
		}
		for f := range d.X {
			s.X[f] = append(s.X[f], d.X[f][r])
		}
		s.Y = append(s.Y, d.Y[r])
	}
	return s
}
