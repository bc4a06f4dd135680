// Package compiler orchestrates nicc's stages for the CLI: loading a model in any supported
// format, evaluating rows (with the float model, or with a compile's firmware in fwsim beside
// its rebuilt golden model), budgeting a firmware ELF, compiling a tree ensemble, an integer MLP
// or an integer LSTM into verified firmware (quantize, fit, emit with its checks, build, verify,
// budget, report), distilling a teacher into trees, and diffing float against integer.
// docs/ARCHITECTURE.md describes the pipeline.
package compiler

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/lightgbm"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/model/xgboost"
)

// Format is a model file format nicc reads.
type Format int

const (
	FormatAuto Format = iota
	FormatNative
	FormatONNX
	FormatXGBoost
	FormatLightGBM
	formatEnd
)

var formatNames = [...]string{
	FormatAuto: "auto", FormatNative: "nicc", FormatONNX: "onnx", FormatXGBoost: "xgboost", FormatLightGBM: "lightgbm",
}

func (f Format) String() string {
	if f >= 0 && f < formatEnd {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// FormatNames lists the names ParseFormat accepts.
func FormatNames() []string { return formatNames[:] }

// ParseFormat reads a format name as the CLI's --format flag gives it.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown model format %q (want one of %s)", s, strings.Join(formatNames[:], ", "))
}

var parsers = [...]func([]byte) (*model.Model, error){
	FormatNative:   model.Unmarshal,
	FormatONNX:     onnx.Parse,
	FormatXGBoost:  xgboost.Parse,
	FormatLightGBM: lightgbm.Parse,
}

// formatTitles name the formats in messages.
var formatTitles = [...]string{
	FormatNative: "nicc JSON", FormatONNX: "ONNX", FormatXGBoost: "XGBoost", FormatLightGBM: "LightGBM",
}

// foreignHints say what to do with a model file of a kind nicc does not read, by its
// extension (XGBoost's UBJSON, .ubj, is refused by name by the XGBoost reader).
var foreignHints = map[string]string{
	".pt":     `a PyTorch file, which nicc does not read: export the model to ONNX with torch.onnx.export(model, example_input, "policy.onnx") and give nicc the .onnx`,
	".pth":    `a PyTorch file, which nicc does not read: export the model to ONNX with torch.onnx.export(model, example_input, "policy.onnx") and give nicc the .onnx`,
	".pkl":    `a Python pickle, which nicc does not read: save an XGBoost booster with save_model("model.json"), a LightGBM one with save_model("model.txt"), a PyTorch model with torch.onnx.export`,
	".joblib": `a joblib pickle, which nicc does not read: save an XGBoost booster with save_model("model.json"), a LightGBM one with save_model("model.txt"), a PyTorch model with torch.onnx.export`,
	".cbm":    `a CatBoost model, which nicc does not read: nicc reads tree ensembles as XGBoost JSON or LightGBM text`,
}

// LoadError is a model file nicc could not read: the format it read the file as and why,
// and the reader's error.
type LoadError struct {
	File   string
	Format Format
	Why    string // how the format was chosen: "by its .onnx extension", "by --format onnx"
	Err    error
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("%s: read as %s (%s): %v", e.File, formatTitles[e.Format], e.Why, e.Err)
	if h, ok := foreignHints[strings.ToLower(filepath.Ext(e.File))]; ok {
		msg += "; a " + filepath.Ext(e.File) + " file is " + h
	}
	return msg
}

func (e *LoadError) Unwrap() error { return e.Err }

// LoadModel reads a model file of the given format, or of the format its name and first
// bytes show when format is FormatAuto. Errors name the file, and a reader's error the
// format it read the file as and why (a *LoadError).
func LoadModel(path string, format Format) (*model.Model, Format, error) {
	data, err := model.ReadFile(path)
	if err != nil {
		return nil, format, err
	}
	why := "by --format " + format.String()
	if format == FormatAuto {
		if format, why, err = sniff(path, data); err != nil {
			if h, ok := foreignHints[strings.ToLower(filepath.Ext(path))]; ok {
				return nil, format, fmt.Errorf("%s: %s", path, h)
			}
			return nil, format, model.InFile(path, err)
		}
	}
	if format <= FormatAuto || format >= formatEnd {
		return nil, format, fmt.Errorf("%s: unknown model format %d", path, int(format))
	}
	m, err := parsers[format](data)
	if err != nil {
		return nil, format, &LoadError{File: path, Format: format, Why: why, Err: err}
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return m, format, nil
}

// sniff tells the format from the file name and content, and says how. XGBoost's is told by
// xgboost.Detect, which reads what xgboost.Parse reads (NaN and Infinity) and knows UBJSON.
func sniff(path string, data []byte) (Format, string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".onnx":
		return FormatONNX, "by its .onnx extension", nil
	case ".json":
		if xgboost.Detect(data) {
			return FormatXGBoost, "by its content", nil
		}
		return FormatNative, "by its .json extension, with no XGBoost learner object", nil
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte("tree\n")) || bytes.HasPrefix(trimmed, []byte("tree\r\n")) {
		return FormatLightGBM, "by its first line, tree", nil
	}
	if xgboost.Detect(data) {
		return FormatXGBoost, "by its content", nil
	}
	if bytes.HasPrefix(trimmed, []byte("{")) {
		return FormatNative, "by its content: a JSON object with no XGBoost learner", nil
	}
	return FormatAuto, "", model.Errorf("cannot tell the model format: name it .onnx or .json, give a LightGBM text model, or pass --format")
}

// LoadModelAs is LoadModel with the model's inputs renamed to inputs (nil keeps the file's
// names), so that handler detection and every later stage see the given names: an export that
// calls its inputs input[0]..input[3] is then an RL-CC policy by name. inputs must name every
// model input, each once.
func LoadModelAs(path string, format Format, inputs []string) (*model.Model, Format, error) {
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

// ParseInputs reads the --inputs flag: comma-separated input names, each non-empty and
// unique; "" is nil, the model's own names.
func ParseInputs(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	names := strings.Split(s, ",")
	for i, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("--inputs %q: name %d is empty", s, i+1)
		}
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("--inputs %q: %q is named twice", s, n)
		}
		names[i] = n
	}
	return names, nil
}
