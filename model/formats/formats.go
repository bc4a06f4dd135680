// Package formats is nicc's registry of model file formats: the one list of the frontends,
// detection of a file's format, and loading by name. Adding an importer is its package under
// model/ (exporting a model.FileFormat) and one line in All; the CLI's help lists formats
// from here.
package formats

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/catboost"
	"github.com/nicc-dev/nicc/model/lightgbm"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/model/xgboost"
)

// Format is a model file format (model.FileFormat, which each frontend exports).
type Format = model.FileFormat

// All is every format nicc reads, in the order detection tries them.
var All = []*model.FileFormat{
	&onnx.FileFormat,
	&xgboost.FileFormat,
	&catboost.FileFormat,
	&model.NativeFormat,
	&lightgbm.FileFormat,
}

// Native is nicc's own JSON, the format nicc writes models in.
var Native = &model.NativeFormat

// Auto is the name that asks for detection.
const Auto = "auto"

// Names are the names Lookup accepts: Auto, then each format's.
func Names() []string {
	names := []string{Auto}
	for _, f := range All {
		names = append(names, f.Name)
	}
	return names
}

// Titles are, in prose, the names of the formats that hold kind ("networks", "tree
// ensembles"; "" for all): "ONNX, XGBoost, CatBoost, nicc JSON and LightGBM".
func Titles(kind string) string {
	var ts []string
	for _, f := range All {
		if strings.Contains(f.Holds, kind) {
			ts = append(ts, f.Title)
		}
	}
	if len(ts) < 2 {
		return strings.Join(ts, "")
	}
	return strings.Join(ts[:len(ts)-1], ", ") + " and " + ts[len(ts)-1]
}

// AutoHelp says how Auto tells the formats apart, for the --format flag's help.
func AutoHelp() string {
	var parts []string
	for _, f := range All {
		if f.Detect != nil {
			parts = append(parts, f.Detects+" is "+f.Title)
		}
	}
	return "auto: " + strings.Join(parts, "; ")
}

// Lookup is the format named name; nil for "" or Auto (detect it).
func Lookup(name string) (*model.FileFormat, error) {
	if name == "" || name == Auto {
		return nil, nil
	}
	for _, f := range All {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("unknown model format %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// foreignHints say what to do with a model file of a kind nicc does not read, by its
// extension (XGBoost's UBJSON, .ubj, is refused by name by the XGBoost reader).
var foreignHints = map[string]string{
	".pt":     `a PyTorch file, which nicc does not read: export the model to ONNX with torch.onnx.export(model, example_input, "policy.onnx") and give nicc the .onnx`,
	".pth":    `a PyTorch file, which nicc does not read: export the model to ONNX with torch.onnx.export(model, example_input, "policy.onnx") and give nicc the .onnx`,
	".pkl":    `a Python pickle, which nicc does not read: save an XGBoost booster with save_model("model.json"), a LightGBM one with save_model("model.txt"), a PyTorch model with torch.onnx.export`,
	".joblib": `a joblib pickle, which nicc does not read: save an XGBoost booster with save_model("model.json"), a LightGBM one with save_model("model.txt"), a PyTorch model with torch.onnx.export`,
	".cbm":    `a CatBoost binary model, which nicc does not read: save the model as JSON with save_model("model.json", format="json")`,
}

// Detect tells a file's format from its name and content, and says how.
func Detect(path string, data []byte) (*model.FileFormat, string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range All {
		if f.Detect == nil {
			continue
		}
		if why, ok := f.Detect(ext, data); ok {
			return f, why, nil
		}
	}
	return nil, "", model.Errorf("cannot tell the model format: name it .onnx or .json, give a LightGBM text model, or pass --format")
}

// LoadError is a model file nicc could not read: the format it read the file as and why,
// and the reader's error.
type LoadError struct {
	File   string
	Format *model.FileFormat
	Why    string // how the format was chosen: "by its .onnx extension", "by --format onnx"
	Err    error
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("%s: read as %s (%s): %v", e.File, e.Format.Title, e.Why, e.Err)
	if h, ok := foreignHints[strings.ToLower(filepath.Ext(e.File))]; ok {
		msg += "; a " + filepath.Ext(e.File) + " file is " + h
	}
	return msg
}

func (e *LoadError) Unwrap() error { return e.Err }

// Load reads a model file in format f, or in the format Detect finds when f is nil. Errors
// name the file, and a reader's error the format it read the file as and why (a
// *LoadError). A model without a name is named after its file.
func Load(path string, f *model.FileFormat) (*model.Model, *model.FileFormat, error) {
	data, err := model.ReadFile(path)
	if err != nil {
		return nil, f, err
	}
	why := ""
	if f != nil {
		why = "by --format " + f.Name
	} else if f, why, err = Detect(path, data); err != nil {
		if h, ok := foreignHints[strings.ToLower(filepath.Ext(path))]; ok {
			return nil, nil, fmt.Errorf("%s: %s", path, h)
		}
		return nil, nil, model.InFile(path, err)
	}
	m, err := f.Parse(data)
	if err != nil {
		return nil, f, &LoadError{File: path, Format: f, Why: why, Err: err}
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return m, f, nil
}
