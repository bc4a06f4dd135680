// Package xgboost reads the JSON model files that XGBoost's save_model("*.json") writes into
// nicc's float IR, keeping XGBoost's exact prediction semantics (checked against XGBoost 1.7.4).
//
// What XGBoost 1.7's CPU predictor computes, and so what the IR says:
//   - a split sends x left when float32(x) < split_condition; a missing (NaN) feature goes to
//     the default child (default_left);
//   - the predictor goes to left+1 for "not less", so a split whose right child is not its
//     left child + 1 is refused rather than guessed;
//   - a leaf's value is its split_conditions entry (base_weights holds the leaf weight before
//     the learning rate, and is not used by prediction);
//   - the score is a float32 sum, base margin first, then tree by tree in file order;
//   - dart multiplies each tree's float32 output by its float32 weight_drop entry before adding
//     it, which is the same as scaling the leaves by it (a float32 product of two float32
//     values, rounded once), so dart models are read with their leaves scaled;
//   - the base margin is objective.ProbToMargin(base_score): -logf(1/base_score - 1) in float32
//     for the logistic objectives, base_score itself for the others.
//
// One difference is left, in model.Ensemble.Eval rather than here: XGBoost's sigmoid is
// float32 arithmetic, 1/(expf(-x)+1), rounded three times, while Eval rounds a float64 sigmoid
// once; the two differ by up to 2 float32 ulps (6e-8) on about half the inputs. The raw score
// is bit-exact.
//
// Refused, each with a one-line error: gblinear, multi-class or multi-target models, vector
// leaves, categorical splits, objectives other than the ones in objectives below, the UBJSON
// and legacy binary formats.
package xgboost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/model"
)

// objectives maps the objectives nicc reads exactly to the transform of their raw score. For
// all of them XGBoost 1.7's PredTransform is the identity or its float32 Sigmoid, and its
// ProbToMargin is the identity or the float32 logit (src/objective/regression_obj.cu,
// regression_loss.h).
var objectives = map[string]model.Transform{
	"reg:squarederror":     model.TransformIdentity,
	"reg:linear":           model.TransformIdentity, // the old name of reg:squarederror
	"reg:squaredlogerror":  model.TransformIdentity,
	"reg:pseudohubererror": model.TransformIdentity,
	"reg:absoluteerror":    model.TransformIdentity,
	"binary:logitraw":      model.TransformIdentity,
	"binary:logistic":      model.TransformSigmoid,
	"reg:logistic":         model.TransformSigmoid,
}

// Parse converts an XGBoost JSON model to the float IR. The model it returns has passed
// Validate; any fault in data is a *model.ParseError.
func Parse(data []byte) (*model.Model, error) {
	if len(data) > model.MaxFileBytes {
		return nil, model.Errorf("model is over the %d MiB limit", model.MaxFileBytes>>20)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, model.Errorf("file is empty")
	}
	off := int64(len(data) - len(trimmed))
	if trimmed[0] != '{' {
		return nil, &model.ParseError{Off: off,
			Msg: "not an XGBoost JSON model: it does not start with '{' (the legacy binary format is not supported; save the model as .json)"}
	}
	if isUBJSON(trimmed) {
		what := "UBJSON, not JSON"
		if bytes.Contains(trimmed[:min(len(trimmed), 32)], []byte("learner")) {
			what = `an XGBoost UBJSON model (save_model("*.ubj"))`
		}
		return nil, model.Errorf(`this is %s; nicc reads XGBoost JSON: save it with save_model("model.json")`, what)
	}
	quoted := quoteNonFinite(data)
	if err := model.CheckLists(quoted, lists); err != nil {
		return nil, err
	}
	var f jsonFile
	if err := json.Unmarshal(quoted, &f); err != nil {
		return nil, model.JSONError(err)
	}
	m, err := convert(&f)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Detect reports whether data is an XGBoost model as far as its start shows, so that a format
// sniffer hands it to Parse: UBJSON (which Parse refuses by name), or JSON whose top level has
// a "learner" object, read as Parse reads it (XGBoost's bare NaN and Infinity accepted).
func Detect(data []byte) bool {
	if isUBJSON(bytes.TrimLeft(data, " \t\r\n")) {
		return true
	}
	var top struct {
		Learner json.RawMessage `json:"learner"` // matched as jsonFile's is, case-insensitively
	}
	return json.Unmarshal(quoteNonFinite(data), &top) == nil && top.Learner != nil
}

// isUBJSON reports an object opening with a UBJSON key-length or container marker, where JSON
// has '"' or '}': XGBoost's save_model("*.ubj") starts {L followed by the length of "learner".
func isUBJSON(trimmed []byte) bool {
	return len(trimmed) > 1 && trimmed[0] == '{' && bytes.IndexByte([]byte("iUIlL$#"), trimmed[1]) >= 0
}

// lists caps every list Parse decodes (model.CheckLists): a model has at most model.MaxInputs
// features, model.MaxTrees trees and model.MaxNodes nodes, in a gbtree or a dart's gbtree.
var lists = func() model.ListCaps {
	cs := model.ListCaps{"version": 16, "learner.feature_names": model.MaxInputs, "learner.gradient_booster.weight_drop": model.MaxTrees}
	for _, g := range []string{"learner.gradient_booster.model.", "learner.gradient_booster.gbtree.model."} {
		cs[g+"trees"], cs[g+"tree_info"] = model.MaxTrees, model.MaxTrees
		for _, a := range []string{"left_children", "right_children", "split_indices", "split_conditions", "default_left", "split_type"} {
			cs[g+"trees[]."+a] = model.MaxNodes
		}
	}
	return cs
}()

// The subset of XGBoost's JSON model schema (doc/model.schema) that prediction needs. Unknown
// fields are ignored: each XGBoost release adds some.
type jsonFile struct {
	Learner *jsonLearner `json:"learner"`
	Version []int64      `json:"version"`
}

type jsonLearner struct {
	Attributes *struct {
		BestIteration json.RawMessage `json:"best_iteration"`
	} `json:"attributes"`
	FeatureNames      []string     `json:"feature_names"`
	GradientBooster   *jsonBooster `json:"gradient_booster"`
	LearnerModelParam *struct {
		BaseScore  *string `json:"base_score"`
		NumClass   string  `json:"num_class"`
		NumFeature string  `json:"num_feature"`
		NumTarget  string  `json:"num_target"`
	} `json:"learner_model_param"`
	Objective *struct {
		Name string `json:"name"`
	} `json:"objective"`
}

// jsonBooster is a gbtree ({name, model}), a dart ({name, gbtree, weight_drop}) or a
// gblinear ({name, model{weights}}, whose model decodes to an empty jsonGBTree). A dart's
// gbtree is a jsonGBTreeBooster, so that nothing decodes a dart nested in a dart.
type jsonBooster struct {
	jsonGBTreeBooster
	GBTree     *jsonGBTreeBooster `json:"gbtree"`
	WeightDrop []f32              `json:"weight_drop"`
}

type jsonGBTreeBooster struct {
	Name  string      `json:"name"`
	Model *jsonGBTree `json:"model"`
}

type jsonGBTree struct {
	Param *struct {
		NumTrees       string `json:"num_trees"`
		SizeLeafVector string `json:"size_leaf_vector"`
	} `json:"gbtree_model_param"`
	Trees    []jsonTree `json:"trees"`
	TreeInfo []int64    `json:"tree_info"`
}

type jsonTree struct {
	Param *struct {
		NumNodes       string `json:"num_nodes"`
		SizeLeafVector string `json:"size_leaf_vector"`
	} `json:"tree_param"`
	LeftChildren    []int32 `json:"left_children"`
	RightChildren   []int32 `json:"right_children"`
	SplitIndices    []int64 `json:"split_indices"`
	SplitConditions []f32   `json:"split_conditions"`
	DefaultLeft     []flag  `json:"default_left"`
	SplitType       []int64 `json:"split_type"`
}

// f32 is a number read as XGBoost reads it: straight to float32, with NaN and ±Infinity
// (which XGBoost writes as bare words) kept, to be refused where they matter.
type f32 float32

func (v *f32) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch s {
	case nanToken:
		*v = f32(math.NaN())
		return nil
	case infToken, posInfToken:
		*v = f32(math.Inf(1))
		return nil
	case negInfToken:
		*v = f32(math.Inf(-1))
		return nil
	}
	x, err := strconv.ParseFloat(s, 32)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: ±Inf, refused later
		return fmt.Errorf("%.40s is not a number", s)
	}
	*v = f32(x)
	return nil
}

// flag is a default_left entry: 0 or 1 (XGBoost 1.6 on), or a boolean (earlier releases).
type flag bool

func (v *flag) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "0", "false":
		*v = false
	case "1", "true":
		*v = true
	default:
		return fmt.Errorf("default_left entry %.40s is not 0, 1, true or false", b)
	}
	return nil
}

// XGBoost writes non-finite floats as the bare words NaN, Infinity and -Infinity, which are
// not JSON. quoteNonFinite replaces each, outside strings, by a JSON string of the same
// length, so offsets in later errors still point into the caller's bytes; f32 reads them back.
const (
	nanToken    = `"N"`       // NaN
	infToken    = `"Infini"`  // Infinity
	posInfToken = `"+Infini"` // +Infinity
	negInfToken = `"-Infini"` // -Infinity
)

func quoteNonFinite(data []byte) []byte {
	out, copied := data, false
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		var word, repl string
		switch {
		case c == '"':
			inString = true
			continue
		case c == 'N' && bytes.HasPrefix(data[i:], []byte("NaN")):
			word, repl = "NaN", nanToken
		case c == 'I' && bytes.HasPrefix(data[i:], []byte("Infinity")):
			word, repl = "Infinity", infToken
		case c == '-' && bytes.HasPrefix(data[i:], []byte("-Infinity")):
			word, repl = "-Infinity", negInfToken
		case c == '+' && bytes.HasPrefix(data[i:], []byte("+Infinity")):
			word, repl = "+Infinity", posInfToken
		default:
			continue
		}
		if !copied {
			out, copied = bytes.Clone(data), true
		}
		copy(out[i:], repl)
		i += len(word) - 1
	}
	return out
}

func convert(f *jsonFile) (*model.Model, error) {
	l := f.Learner
	if l == nil {
		return nil, model.Errorf("not an XGBoost JSON model: no \"learner\" object")
	}
	version := "(version unknown)"
	if len(f.Version) > 0 {
		if f.Version[0] < 1 {
			return nil, model.Errorf("XGBoost version %d.x is older than 1.0, the first with JSON models", f.Version[0])
		}
		v := make([]string, len(f.Version))
		for i, x := range f.Version {
			v[i] = strconv.FormatInt(x, 10)
		}
		version = strings.Join(v, ".")
	}
	if l.Objective == nil || l.Objective.Name == "" {
		return nil, model.Errorf("learner has no objective name")
	}
	obj := l.Objective.Name
	transform, ok := objectives[obj]
	if !ok {
		return nil, model.Errorf("objective %.60q is not supported (want one of reg:squarederror, binary:logistic, reg:logistic, binary:logitraw, reg:squaredlogerror, reg:pseudohubererror, reg:absoluteerror)", obj)
	}
	p := l.LearnerModelParam
	if p == nil {
		return nil, model.Errorf("learner has no learner_model_param")
	}
	if n, err := paramInt("num_class", p.NumClass, 0); err != nil {
		return nil, err
	} else if n > 1 {
		return nil, model.Errorf("multi-class models are not supported (num_class is %d)", n)
	}
	if n, err := paramInt("num_target", p.NumTarget, 1); err != nil {
		return nil, err
	} else if n > 1 {
		return nil, model.Errorf("multi-target models are not supported (num_target is %d)", n)
	}
	numFeature, err := paramInt("num_feature", p.NumFeature, -1)
	if err != nil {
		return nil, err
	}
	if numFeature < 1 || numFeature > model.MaxInputs {
		return nil, model.Errorf("num_feature is %d, want 1..%d", numFeature, model.MaxInputs)
	}
	inputs := make([]string, numFeature)
	switch len(l.FeatureNames) {
	case 0:
		for i := range inputs {
			inputs[i] = "f" + strconv.Itoa(i)
		}
	case numFeature:
		copy(inputs, l.FeatureNames)
	default:
		return nil, model.Errorf("%d feature_names for num_feature %d", len(l.FeatureNames), numFeature)
	}
	if p.BaseScore == nil {
		return nil, model.Errorf("learner_model_param has no base_score")
	}
	baseScore, err := parseBaseScore(*p.BaseScore)
	if err != nil {
		return nil, err
	}
	base := baseScore
	if transform == model.TransformSigmoid {
		// LogisticRegression::ProbToMargin, which CHECKs the range first.
		if !(baseScore > 0 && baseScore < 1) {
			return nil, model.Errorf("base_score is %v; a logistic objective needs it in (0, 1)", baseScore)
		}
		base = logit32(baseScore)
	}

	gb, weights, err := boosterTrees(l.GradientBooster)
	if err != nil {
		return nil, err
	}
	numTrees, dart := len(gb.Trees), weights != nil

	e := &model.Ensemble{Base: float64(base), Transform: transform, Float32: true,
		Trees: make([]model.Tree, numTrees)}
	for t := range gb.Trees {
		w := float32(1)
		if dart {
			w = float32(weights[t])
		}
		nodes, err := convertTree(t, &gb.Trees[t], numFeature, w)
		if err != nil {
			return nil, err
		}
		e.Trees[t].Nodes = nodes
	}

	doc := fmt.Sprintf("XGBoost %s %s, objective %s, %d trees, base_score %v", version, l.GradientBooster.Name, obj, numTrees, baseScore)
	if transform == model.TransformSigmoid {
		doc += fmt.Sprintf(" (margin %v)", base)
	}
	if dart {
		doc += "; dart weight_drop folded into the leaves"
	}
	var bi string
	if l.Attributes != nil && json.Unmarshal(l.Attributes.BestIteration, &bi) == nil {
		if n, err := strconv.Atoi(bi); err == nil && n+1 < numTrees {
			doc += fmt.Sprintf("; all trees are used, though best_iteration is %d", n)
		}
	}
	return &model.Model{Version: model.NativeVersion, Doc: doc + ".", Inputs: inputs, Ensemble: e}, nil
}

// boosterTrees checks the gradient booster (gbtree, or dart around a gbtree) and its trees'
// parameters, and returns its trees' model with, for dart, each tree's weight (nil for gbtree).
func boosterTrees(booster *jsonBooster) (*jsonGBTree, []f32, error) {
	if booster == nil {
		return nil, nil, model.Errorf("learner has no gradient_booster")
	}
	g := &booster.jsonGBTreeBooster // the gbtree itself, inside a dart booster
	dart := false
	switch g.Name {
	case "gbtree":
	case "dart":
		dart = true
		if booster.GBTree == nil || booster.GBTree.Name != "gbtree" {
			return nil, nil, model.Errorf("dart booster has no gbtree inside")
		}
		g = booster.GBTree
	case "gblinear":
		return nil, nil, model.Errorf("gblinear (a linear booster, not trees) is not supported")
	default:
		return nil, nil, model.Errorf("gradient booster %.60q is not supported (want gbtree or dart)", g.Name)
	}
	gb := g.Model
	if gb == nil {
		return nil, nil, model.Errorf("gbtree has no model")
	}
	if gb.Param == nil {
		return nil, nil, model.Errorf("gbtree model has no gbtree_model_param")
	}
	numTrees, err := paramInt("num_trees", gb.Param.NumTrees, -1)
	if err != nil {
		return nil, nil, err
	}
	if numTrees != len(gb.Trees) {
		return nil, nil, model.Errorf("num_trees is %d, but there are %d trees", numTrees, len(gb.Trees))
	}
	if numTrees == 0 {
		return nil, nil, model.Errorf("model has no trees")
	}
	if n, err := paramInt("size_leaf_vector", gb.Param.SizeLeafVector, 0); err != nil {
		return nil, nil, err
	} else if n > 1 {
		return nil, nil, model.Errorf("vector leaves are not supported (size_leaf_vector is %d)", n)
	}
	if len(gb.TreeInfo) != numTrees {
		return nil, nil, model.Errorf("tree_info has %d entries for %d trees", len(gb.TreeInfo), numTrees)
	}
	for t, grp := range gb.TreeInfo {
		if grp != 0 {
			return nil, nil, model.Errorf("tree %d: output group %d; multi-output models are not supported", t, grp)
		}
	}
	var weights []f32
	if dart {
		weights = booster.WeightDrop
		if len(weights) != numTrees {
			return nil, nil, model.Errorf("dart weight_drop has %d entries for %d trees", len(weights), numTrees)
		}
		for t, w := range weights {
			if !finite32(float32(w)) {
				return nil, nil, model.Errorf("tree %d: dart weight is %v", t, float32(w))
			}
		}
	}
	total := 0
	for t := range gb.Trees {
		total += len(gb.Trees[t].LeftChildren)
		if total > model.MaxNodes {
			return nil, nil, model.Errorf("model has over %d nodes", model.MaxNodes)
		}
	}
	return gb, weights, nil
}

// paramInt reads one of XGBoost's string-valued integer parameters; def is used when it is
// absent, and def < 0 makes it required.
func paramInt(name, s string, def int) (int, error) {
	if s == "" {
		if def < 0 {
			return 0, model.Errorf("%s is missing", name)
		}
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, model.Errorf("%s is %.40q, want a count", name, s)
	}
	return n, nil
}

// parseBaseScore reads base_score as XGBoost writes it: a float32 in a string, "5E-1", or
// (in later releases) a one-element list "[5E-1]".
func parseBaseScore(s string) (float32, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	v, err := strconv.ParseFloat(t, 32)
	if err != nil || !finite32(float32(v)) {
		return 0, model.Errorf("base_score %.40q is not a finite number", s)
	}
	return float32(v), nil
}

// logit32 is LogisticRegression::ProbToMargin: -logf(1.0f / p - 1.0f), in float32. The log is
// Go's float64 one rounded to float32, i.e. correctly rounded; glibc's logf is not always (we
// measured 66 last-bit differences in 200k random inputs), so a rare base_score could give a
// margin one ulp off XGBoost's. base_score 0.3 and 0.5 agree.
func logit32(p float32) float32 {
	q := float32(float32(1)/p) - 1
	return -float32(math.Log(float64(q)))
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// convertTree checks one tree's arrays and walks it from the root. Nodes unreachable from the
// root (ones a pruner deleted) are dropped; the others keep their order, so node ids are
// XGBoost's whenever nothing was deleted. Every node is visited at most once, so a cycle or a
// shared child is found, not followed.
func convertTree(t int, jt *jsonTree, numFeature int, weight float32) ([]model.Node, error) {
	if jt.Param == nil {
		return nil, model.Errorf("tree %d: no tree_param", t)
	}
	n, err := strconv.Atoi(jt.Param.NumNodes)
	if err != nil || n < 1 || n > model.MaxNodes {
		return nil, model.Errorf("tree %d: num_nodes is %.40q, want 1..%d", t, jt.Param.NumNodes, model.MaxNodes)
	}
	if s := jt.Param.SizeLeafVector; s != "" && s != "0" && s != "1" {
		return nil, model.Errorf("tree %d: vector leaves are not supported (size_leaf_vector is %.40q)", t, s)
	}
	for _, a := range []struct {
		name string
		n    int
	}{
		{"left_children", len(jt.LeftChildren)},
		{"right_children", len(jt.RightChildren)},
		{"split_indices", len(jt.SplitIndices)},
		{"split_conditions", len(jt.SplitConditions)},
		{"default_left", len(jt.DefaultLeft)},
	} {
		if a.n != n {
			return nil, model.Errorf("tree %d: %s has %d entries for %d nodes", t, a.name, a.n, n)
		}
	}
	if jt.SplitType != nil && len(jt.SplitType) != n {
		return nil, model.Errorf("tree %d: split_type has %d entries for %d nodes", t, len(jt.SplitType), n)
	}

	// Walk from the root, checking each reached node; reached[i] says node i was reached.
	reached := make([]bool, n)
	reached[0] = true
	stack := []int32{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		left := jt.LeftChildren[i]
		cond := float32(jt.SplitConditions[i])
		if left == -1 {
			if !finite32(cond) {
				return nil, model.Errorf("tree %d node %d: leaf value is %v", t, i, cond)
			}
			continue
		}
		right := jt.RightChildren[i]
		switch {
		case jt.SplitType != nil && jt.SplitType[i] == 1:
			return nil, model.Errorf("tree %d node %d: a categorical split on feature %d (split_type 1); nicc reads numeric splits only: train without enable_categorical, or one-hot encode the feature", t, i, jt.SplitIndices[i])
		case jt.SplitType != nil && jt.SplitType[i] != 0:
			return nil, model.Errorf("tree %d node %d: split_type %d is neither numeric (0) nor categorical (1)", t, i, jt.SplitType[i])
		case left < 1 || int(left) >= n:
			return nil, model.Errorf("tree %d node %d: left child %d out of range (tree has nodes 0..%d, root 0)", t, i, left, n-1)
		case right != left+1:
			return nil, model.Errorf("tree %d node %d: right child %d is not left child %d + 1, as XGBoost's predictor assumes", t, i, right, left)
		case int(right) >= n:
			return nil, model.Errorf("tree %d node %d: right child %d out of range (tree has nodes 0..%d, root 0)", t, i, right, n-1)
		case jt.SplitIndices[i] < 0 || jt.SplitIndices[i] >= int64(numFeature):
			return nil, model.Errorf("tree %d node %d: split feature %d out of range (num_feature is %d)", t, i, jt.SplitIndices[i], numFeature)
		case !finite32(cond):
			return nil, model.Errorf("tree %d node %d: split condition is %v", t, i, cond)
		}
		for _, c := range [2]int32{left, right} {
			if reached[c] {
				return nil, model.Errorf("tree %d node %d: child %d is reached twice (a cycle or a shared child)", t, i, c)
			}
			reached[c] = true
			stack = append(stack, c)
		}
	}

	id := make([]int, n) // XGBoost node -> IR node, for reached nodes
	k := 0
	for i, r := range reached {
		if r {
			id[i] = k
			k++
		}
	}
	nodes := make([]model.Node, 0, k)
	for i, r := range reached {
		if !r {
			continue
		}
		cond := float32(jt.SplitConditions[i])
		if jt.LeftChildren[i] == -1 {
			// Dart's out += tree * w, both float32: one rounding of the exact product.
			nodes = append(nodes, model.Node{Leaf: true, Value: float64(float32(cond * weight))})
			continue
		}
		left, right := jt.LeftChildren[i], jt.RightChildren[i]
		nodes = append(nodes, model.Node{
			Feature:     int(jt.SplitIndices[i]),
			Threshold:   float64(cond),
			Cmp:         model.CmpLT,
			Left:        id[left],
			Right:       id[right],
			DefaultLeft: bool(jt.DefaultLeft[i]),
			Missing:     model.MissingNaN,
		})
	}
	return nodes, nil
}

// FileFormat is XGBoost's JSON model as nicc's format registry knows it: by its content
// (Detect), whatever the file is called.
var FileFormat = model.FileFormat{Name: "xgboost", Title: "XGBoost", Exts: []string{".json", ".ubj"}, Parse: Parse,
	Holds:   "tree ensembles",
	Detects: "JSON with an XGBoost learner object",
	Detect: func(_ string, data []byte) (string, bool) {
		return "by its content", Detect(data)
	}}
