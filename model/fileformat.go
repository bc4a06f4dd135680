package model

import "bytes"

// FileFormat is a model file format a frontend reads: its names, how to recognize a file of
// it, and its parser. Each frontend exports one; model/formats lists them.
type FileFormat struct {
	Name  string   // the --format name
	Title string   // the name in messages
	Exts  []string // the extensions it is known by, lower case with the dot, for help
	Holds string   // what models it holds: "networks", "tree ensembles", or both
	// Detect says whether a file with extension ext (lower case) and content data is in this
	// format, and how that was told ("by its .onnx extension"); nil tells nothing.
	Detect func(ext string, data []byte) (why string, ok bool)
	// Detects says in a few words what Detect recognizes, for help ("a .onnx file").
	Detects string
	Parse   func(data []byte) (*Model, error)
}

// NativeFormat is nicc's own JSON (Marshal, Unmarshal): a .json file that no format tried
// before it claimed, or a JSON object.
var NativeFormat = FileFormat{Name: "nicc", Title: "nicc JSON", Exts: []string{".json"}, Parse: Unmarshal,
	Holds:   "networks and tree ensembles",
	Detects: "other .json, or a JSON object",
	Detect: func(ext string, data []byte) (string, bool) {
		if ext == ".json" {
			return "by its .json extension, with no XGBoost learner object and no CatBoost trees", true
		}
		if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
			return "by its content: a JSON object with no XGBoost learner and no CatBoost trees", true
		}
		return "", false
	}}
