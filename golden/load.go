// Package golden is the golden model: a model file loaded for its handler and put in the
// policy's input order (Load), and its integer policy (Quantize), what a compile verifies its
// firmware against, and what reading a compile back rebuilds. It also holds the RL-CC
// parameters' one truth, the --inputs layouts and the sanity probe.
package golden

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/formats"
)

// LoadModel reads a model file in format f, or in the format its name and content show when
// f is nil (formats.Load).
func LoadModel(path string, f *model.FileFormat) (*model.Model, *model.FileFormat, error) {
	return formats.Load(path, f)
}

// ParseFormat is the format the CLI's --format flag names; nil for auto.
func ParseFormat(name string) (*model.FileFormat, error) { return formats.Lookup(name) }

// LoadModelAs is LoadModel with the model's inputs renamed to inputs (nil keeps the file's
// names), so that handler detection and every later stage see the given names: an export that
// calls its inputs input[0]..input[3] is then an RL-CC policy by name. inputs must name every
// model input, each once.
func LoadModelAs(path string, format *model.FileFormat, inputs []string) (*model.Model, *model.FileFormat, error) {
	m, f, err := LoadModel(path, format)
	if err != nil || inputs == nil {
		return m, f, err
	}
	if len(inputs) != m.NumInputs() {
		return nil, f, fmt.Errorf("%s: --inputs names %d inputs (%s); model %s takes %d (%s)",
			path, len(inputs), strings.Join(inputs, ","), m.Name, m.NumInputs(), strings.Join(m.Inputs, ","))
	}
	m.Inputs = slices.Clone(inputs)
	return m, f, nil
}
