// Package compiler orchestrates nicc's stages for the CLI: loading a model in any supported
// format, evaluating rows (with the float model, or with a compile's firmware in fwsim beside
// its rebuilt golden model), budgeting a firmware ELF, compiling a tree ensemble, an integer MLP
// or an integer LSTM into verified firmware (quantize, fit, emit with its checks, build, verify,
// budget, report), distilling a teacher into trees, and diffing float against integer.
// docs/ARCHITECTURE.md describes the pipeline.
package compiler

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
