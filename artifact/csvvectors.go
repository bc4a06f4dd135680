package artifact

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/target"
)

// IsCSVVectors reports whether a vectors file is read as rows (CSVVectors): its name ends in
// .csv or .tsv, or .npy or .npz (NumPy's). Any other name is the vectors format (ReadVectors).
func IsCSVVectors(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".tsv", ".npy", ".npz":
		return true
	}
	return false
}

// CSVVectors reads rows of a policy's inputs (the CSV rules of model.OpenCSV) as calls of
// nicc_policy: each row becomes the int32 vector x, passed by address, and for a policy with
// state (an LSTM) its words zeroed, a new flow's, passed by address after it.
//
// With a compile's report r, a row holds real values, quantized with the report's input
// formats (clamped to their ranges, as the handler clamps), and a header naming every input
// selects those columns. With r nil, a row holds the raw int32 values themselves, as many as
// the policy reads, and a header is ignored.
func CSVVectors(path string, r *CompileReport) ([]budget.Vector, error) {
	in, err := model.OpenCSV(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	vs, err := csvVectors(in, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vs, nil
}

func csvVectors(in *model.RowReader, r *CompileReport) ([]budget.Vector, error) {
	cols := make([]int, in.Width())
	for i := range cols {
		cols[i] = i
	}
	var stateWords int
	if r != nil {
		if r.LSTM != nil {
			stateWords = max(r.LSTM.StateWords, 0)
		}
		n := len(r.Inputs)
		cols = cols[:0]
		if in.Names != nil {
			for _, f := range r.Inputs {
				if i := slices.Index(in.Names, f.Name); i >= 0 {
					cols = append(cols, i)
				}
			}
		}
		if len(cols) != n {
			if in.Width() != n {
				return nil, fmt.Errorf("rows have %d values; nicc_policy takes %d inputs: give them in order, or a header naming each", in.Width(), n)
			}
			cols = cols[:0]
			for i := range n {
				cols = append(cols, i)
			}
		}
	}
	formats := []InputInfo(nil)
	if r != nil {
		formats = r.Inputs
	}
	var vs []budget.Vector
	for {
		row, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(vs) == budget.MaxVectors {
			return nil, fmt.Errorf("line %d: more than %d vectors", in.Line(), budget.MaxVectors)
		}
		x := make([]int32, len(cols))
		for j, col := range cols {
			v := row[col]
			if math.IsNaN(v) {
				return nil, fmt.Errorf("line %d: column %d is NaN: the firmware's inputs are integers, with no missing value", in.Line(), col+1)
			}
			if formats != nil {
				f := formats[j]
				x[j] = f.Format().Quantize(v)
				continue
			}
			if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("line %d: column %d: %v is not an int32: rows for a bare ELF hold raw inputs (point budget at the compile directory to quantize real values with its formats)", in.Line(), col+1, v)
			}
			x[j] = int32(v)
		}
		v := budget.Vector{Line: in.Line(), Args: []budget.Arg{{Bytes: target.Int32Bytes(x)}}}
		if stateWords > 0 {
			v.Args = append(v.Args, budget.Arg{Bytes: make([]byte, 4*stateWords)})
		}
		vs = append(vs, v)
	}
	return vs, nil
}
