package quantize

import (
	"errors"

	"github.com/nicc-dev/nicc/model"
)

func chooseInputs(names []string, lo, hi []float64) ([]Input, error) {
	return nil, errors.New("quantize: ChooseInputs: not implemented yet")
}

func trees(m *model.Model, inputs []Input, opt Options) (*TreeIR, error) {
	return nil, errors.New("quantize: Trees: not implemented yet")
}

// Dump is the IR as text: inputs, formats, then each tree as indented splits and leaves.
func (ir *TreeIR) Dump() string { return "" }
