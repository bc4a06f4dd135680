// Package catboost reads the JSON model files that CatBoost's save_model(path,
// format="json") writes into nicc's float IR, keeping CatBoost's prediction semantics
// (checked against CatBoost 1.2.10's and a 2019 build's own predictions, testdata/catboost).
//
// What CatBoost's evaluator computes, and so what the IR says:
//   - a model is a sum of oblivious trees: every level of a tree tests one float feature
//     against one border, and a tree of depth d has 2^d leaf values;
//   - level k of a tree (its k-th entry in "splits") gives bit k of the leaf index, 1 when
//     float32(x) > border, the border being a float32 (TFloatFeature's borders); leaf_values is
//     indexed by that number, so splits[0] is the least significant bit;
//   - a NaN feature is compared as it is (AsIs: not greater, bit 0), as -∞ (AsFalse: bit 0) or
//     as +∞ (AsTrue: bit 1), after its feature's nan_value_treatment;
//   - the raw value is scale · Σ leaves + bias, from scale_and_bias (absent in CatBoost
//     before 0.25: scale 1, bias 0), summed in float64;
//   - RMSE predicts the raw value, Logloss and CrossEntropy the probability 1/(1+e^-raw).
//
// The IR holds each tree as a complete binary tree whose root tests the last split (the most
// significant bit) and whose left child is the x > border side: leaf i of the bottom level,
// left to right, is leaf_values[2^d-1-i]. Scale multiplies each leaf value (exact for scale 1,
// the value every model found has; otherwise within a few float64 roundings).
//
// Refused, each with a one-line error: categorical features (one-hot splits or CTRs), text and
// embedding features, non-symmetric trees (grow_policy Depthwise or Lossguide, written as
// "trees"), models with more than one output (multi-class, multi-target), and losses other than
// the three above.
package catboost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/nicc-dev/nicc/model"
)

// MaxDepth is the deepest oblivious tree read: CatBoost's own limit on depth.
const MaxDepth = 16

// losses maps the loss functions nicc reads to the transform of their raw value.
var losses = map[string]model.Transform{
	"RMSE":         model.TransformIdentity,
	"Logloss":      model.TransformSigmoid,
	"CrossEntropy": model.TransformSigmoid,
}

// multiOutput are losses whose models have one output per class or target.
var multiOutput = map[string]string{
	"MultiClass":          "multi-class",
	"MultiClassOneVsAll":  "multi-class",
	"MultiLogloss":        "multi-label",
	"MultiCrossEntropy":   "multi-label",
	"MultiRMSE":           "multi-target",
	"RMSEWithUncertainty": "two-output (RMSEWithUncertainty)",
}

// lists caps every list Parse decodes (model.CheckLists): a model has at most model.MaxInputs
// features, model.MaxTrees trees of depth at most MaxDepth and model.MaxNodes leaves and borders.
var lists = model.ListCaps{
	"features_info.float_features":           model.MaxInputs,
	"features_info.float_features[].borders": model.MaxNodes,
	"features_info.categorical_features":     model.MaxInputs,
	"features_info.ctrs":                     model.MaxInputs,
	"features_info.text_features":            model.MaxInputs,
	"features_info.embedding_features":       model.MaxInputs,
	"features_info.estimated_features":       model.MaxInputs,
	"oblivious_trees":                        model.MaxTrees,
	"oblivious_trees[].splits":               model.MaxTrees * MaxDepth,
	"oblivious_trees[].leaf_values":          model.MaxNodes,
	"trees":                                  model.MaxTrees,
	"scale_and_bias":                         model.MaxInputs,
	"scale_and_bias[]":                       model.MaxInputs,
}

// The subset of CatBoost's JSON model that prediction needs. Unknown fields are ignored:
// releases add some.
type jsonFile struct {
	FeaturesInfo   *featuresInfo     `json:"features_info"`
	ObliviousTrees []jsonTree        `json:"oblivious_trees"`
	Trees          []json.RawMessage `json:"trees"`
	ScaleAndBias   []json.RawMessage `json:"scale_and_bias"`
	ModelInfo      *struct {
		Params *struct {
			LossFunction *struct {
				Type string `json:"type"`
			} `json:"loss_function"`
		} `json:"params"`
	} `json:"model_info"`
}

type featuresInfo struct {
	FloatFeatures       []floatFeature    `json:"float_features"`
	CategoricalFeatures []json.RawMessage `json:"categorical_features"`
	Ctrs                []json.RawMessage `json:"ctrs"`
	TextFeatures        []json.RawMessage `json:"text_features"`
	EmbeddingFeatures   []json.RawMessage `json:"embedding_features"`
	EstimatedFeatures   []json.RawMessage `json:"estimated_features"`
}

type floatFeature struct {
	FeatureIndex      *int      `json:"feature_index"`
	FlatFeatureIndex  *int      `json:"flat_feature_index"`
	FeatureID         string    `json:"feature_id"`
	Borders           []float64 `json:"borders"`
	NanValueTreatment string    `json:"nan_value_treatment"`
}

type jsonTree struct {
	Splits     []jsonSplit `json:"splits"`
	LeafValues []float64   `json:"leaf_values"`
}

type jsonSplit struct {
	SplitType         string   `json:"split_type"`
	FloatFeatureIndex *int     `json:"float_feature_index"`
	Border            *float64 `json:"border"`
}

// Parse converts a CatBoost JSON model to the float IR. The model it returns has passed
// Validate; any fault in data is a *model.ParseError.
func Parse(data []byte) (*model.Model, error) {
	if len(data) > model.MaxFileBytes {
		return nil, model.Errorf("model is over the %d MiB limit", model.MaxFileBytes>>20)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, model.Errorf("file is empty")
	}
	if trimmed[0] != '{' {
		return nil, &model.ParseError{Off: int64(len(data) - len(trimmed)),
			Msg: `not a CatBoost JSON model: it does not start with '{' (the binary .cbm format is not read; save the model with save_model("model.json", format="json"))`}
	}
	if err := model.CheckLists(data, lists); err != nil {
		return nil, err
	}
	var f jsonFile
	if err := json.Unmarshal(data, &f); err != nil {
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

// Detect reports whether data is JSON whose top level has CatBoost's features_info and
// oblivious_trees (or, for the non-symmetric models Parse refuses by name, trees).
func Detect(data []byte) bool {
	var top struct {
		FeaturesInfo   json.RawMessage `json:"features_info"`
		ObliviousTrees json.RawMessage `json:"oblivious_trees"`
		Trees          json.RawMessage `json:"trees"`
	}
	return json.Unmarshal(data, &top) == nil && top.FeaturesInfo != nil && (top.ObliviousTrees != nil || top.Trees != nil)
}

func convert(f *jsonFile) (*model.Model, error) {
	fi := f.FeaturesInfo
	if fi == nil {
		return nil, model.Errorf("no features_info: not a CatBoost JSON model")
	}
	for _, c := range []struct {
		n    int
		what string
	}{
		{len(fi.Ctrs), "CTR features (target statistics of categorical features)"},
		{len(fi.CategoricalFeatures), "categorical features"},
		{len(fi.TextFeatures), "text features"},
		{len(fi.EmbeddingFeatures), "embedding features"},
		{len(fi.EstimatedFeatures), "estimated features (from text or embeddings)"},
	} {
		if c.n > 0 {
			return nil, model.Errorf("the model has %s (%d); nicc reads models over float features only", c.what, c.n)
		}
	}
	if f.Trees != nil {
		return nil, model.Errorf("the model's %d trees are non-symmetric (grow_policy Depthwise or Lossguide); nicc reads CatBoost's oblivious trees (grow_policy SymmetricTree, the default)", len(f.Trees))
	}
	if len(f.ObliviousTrees) == 0 {
		return nil, model.Errorf("the model has no oblivious_trees")
	}
	transform, loss, err := lossTransform(f)
	if err != nil {
		return nil, err
	}
	scale, bias, err := scaleAndBias(f.ScaleAndBias)
	if err != nil {
		return nil, err
	}
	inputs, missing, borders, err := floatInputs(fi.FloatFeatures)
	if err != nil {
		return nil, err
	}
	e := &model.Ensemble{Base: bias, Transform: transform, Float32Splits: true,
		Trees: make([]model.Tree, len(f.ObliviousTrees))}
	nodes, minDepth, maxDepth := 0, MaxDepth, 0
	for t := range f.ObliviousTrees {
		tr := &f.ObliviousTrees[t]
		d := len(tr.Splits)
		if d > MaxDepth {
			return nil, model.Errorf("tree %d has depth %d, over CatBoost's limit of %d", t, d, MaxDepth)
		}
		if nodes += 1<<(d+1) - 1; nodes > model.MaxNodes {
			return nil, model.Errorf("the model has over %d nodes", model.MaxNodes)
		}
		if len(tr.LeafValues) != 1<<d {
			if len(tr.LeafValues) > 1<<d && len(tr.LeafValues)%(1<<d) == 0 {
				return nil, model.Errorf("tree %d has %d outputs per leaf; nicc reads models with one output (not multi-class or multi-target)", t, len(tr.LeafValues)>>d)
			}
			return nil, model.Errorf("tree %d has %d leaf values; depth %d needs %d", t, len(tr.LeafValues), d, 1<<d)
		}
		nds, err := treeNodes(tr, len(inputs), missing, borders, scale)
		if err != nil {
			return nil, model.Errorf("tree %d: %v", t, err)
		}
		e.Trees[t].Nodes = nds
		minDepth, maxDepth = min(minDepth, d), max(maxDepth, d)
	}
	doc := fmt.Sprintf("CatBoost JSON, loss %s, %d oblivious trees of depth %d", loss, len(e.Trees), maxDepth)
	if minDepth != maxDepth {
		doc = fmt.Sprintf("CatBoost JSON, loss %s, %d oblivious trees of depth %d to %d", loss, len(e.Trees), minDepth, maxDepth)
	}
	doc += fmt.Sprintf(", scale %v, bias %v", scale, bias)
	if scale != 1 {
		doc += " (the scale folded into the leaves)"
	}
	return &model.Model{Version: model.NativeVersion, Doc: doc + ".", Inputs: inputs, Ensemble: e}, nil
}

// lossTransform is the transform of the model's loss function, and its name.
func lossTransform(f *jsonFile) (model.Transform, string, error) {
	mi := f.ModelInfo
	if mi == nil || mi.Params == nil || mi.Params.LossFunction == nil || mi.Params.LossFunction.Type == "" {
		return 0, "", model.Errorf("model_info.params.loss_function.type is missing: nicc cannot tell a regression (RMSE) from a classifier (Logloss)")
	}
	loss := mi.Params.LossFunction.Type
	if tr, ok := losses[loss]; ok {
		return tr, loss, nil
	}
	if what, ok := multiOutput[loss]; ok {
		return 0, "", model.Errorf("loss %s makes a %s model; nicc reads models with one output", loss, what)
	}
	return 0, "", model.Errorf("loss %s is not one nicc reads (RMSE, Logloss, CrossEntropy)", strconv.QuoteToASCII(truncate(loss)))
}

// truncate keeps an error line short whatever a file holds.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// scaleAndBias reads [scale, [bias]]; an absent field is CatBoost's default, 1 and 0.
func scaleAndBias(raw []json.RawMessage) (float64, float64, error) {
	if raw == nil {
		return 1, 0, nil
	}
	var scale float64
	var bias []float64
	if len(raw) != 2 || json.Unmarshal(raw[0], &scale) != nil || json.Unmarshal(raw[1], &bias) != nil {
		return 0, 0, model.Errorf("scale_and_bias is not [scale, [bias]]")
	}
	switch {
	case len(bias) > 1:
		return 0, 0, model.Errorf("scale_and_bias has %d biases: a model with %d outputs (multi-class or multi-target); nicc reads models with one output", len(bias), len(bias))
	case len(bias) == 0:
		bias = []float64{0}
	}
	if !finite(scale) || scale == 0 || !finite(bias[0]) {
		return 0, 0, model.Errorf("scale_and_bias is [%v, [%v]]: want a finite, nonzero scale and a finite bias", scale, bias[0])
	}
	return scale, bias[0], nil
}

// floatInputs are the float features' names, the default direction of a NaN in each, and
// each feature's borders as float32 values. Feature i must be float feature i and flat
// feature i: with no categorical features, CatBoost numbers them so.
func floatInputs(ffs []floatFeature) ([]string, []bool, []map[float32]bool, error) {
	n := len(ffs)
	if n == 0 || n > model.MaxInputs {
		return nil, nil, nil, model.Errorf("features_info has %d float features, want 1..%d", n, model.MaxInputs)
	}
	names := make([]string, n)
	nanLeft := make([]bool, n)
	borders := make([]map[float32]bool, n)
	seen := map[string]bool{}
	unique := true
	for i := range ffs {
		ff := &ffs[i]
		for _, idx := range []*int{ff.FeatureIndex, ff.FlatFeatureIndex} {
			if idx != nil && *idx != i {
				return nil, nil, nil, model.Errorf("float feature %d has feature_index %v and flat_feature_index %v; want %d for both", i, deref(ff.FeatureIndex), deref(ff.FlatFeatureIndex), i)
			}
		}
		switch ff.NanValueTreatment {
		case "", "AsIs", "AsFalse":
		case "AsTrue":
			nanLeft[i] = true
		default:
			return nil, nil, nil, model.Errorf("float feature %d has nan_value_treatment %s; want AsIs, AsFalse or AsTrue", i, strconv.QuoteToASCII(truncate(ff.NanValueTreatment)))
		}
		borders[i] = make(map[float32]bool, len(ff.Borders))
		for _, b := range ff.Borders {
			borders[i][float32(b)] = true
		}
		names[i] = ff.FeatureID
		if names[i] == "" || seen[names[i]] {
			unique = false
		}
		seen[names[i]] = true
	}
	if !unique {
		for i := range names {
			names[i] = "f" + strconv.Itoa(i)
		}
	}
	return names, nanLeft, borders, nil
}

func deref(p *int) any {
	if p == nil {
		return "absent"
	}
	return *p
}

// treeNodes is an oblivious tree as a complete binary tree (see the package doc): the root
// tests the last split, the left child is the x > border side, and the bottom level holds the
// leaves in reverse index order, each multiplied by scale.
func treeNodes(tr *jsonTree, numInputs int, nanLeft []bool, borders []map[float32]bool, scale float64) ([]model.Node, error) {
	d := len(tr.Splits)
	levels := make([]model.Node, d)
	for k, s := range tr.Splits {
		if s.SplitType != "FloatFeature" {
			return nil, fmt.Errorf("split %d is a %s split; nicc reads FloatFeature splits only", k, strconv.QuoteToASCII(truncate(s.SplitType)))
		}
		if s.FloatFeatureIndex == nil || s.Border == nil {
			return nil, fmt.Errorf("split %d has no float_feature_index or no border", k)
		}
		fi, b := *s.FloatFeatureIndex, *s.Border
		if fi < 0 || fi >= numInputs {
			return nil, fmt.Errorf("split %d: float_feature_index %d is out of range [0, %d)", k, fi, numInputs)
		}
		if !finite(b) || !borders[fi][float32(b)] {
			return nil, fmt.Errorf("split %d: border %v is not among float feature %d's borders", k, b, fi)
		}
		// Level k of the binary tree tests the split of leaf-index bit d-1-k.
		levels[d-1-k] = model.Node{Feature: fi, Threshold: float64(float32(b)), Cmp: model.CmpGT,
			Missing: model.MissingNaN, DefaultLeft: nanLeft[fi]}
	}
	inner := 1<<d - 1
	nodes := make([]model.Node, 0, inner+1<<d)
	for k := range d {
		for range 1 << k {
			n := levels[k]
			i := len(nodes)
			n.Left, n.Right = 2*i+1, 2*i+2
			nodes = append(nodes, n)
		}
	}
	for p := range 1 << d {
		v := tr.LeafValues[inner-p] * scale
		if !finite(v) {
			return nil, fmt.Errorf("leaf %d is %v", inner-p, tr.LeafValues[inner-p])
		}
		nodes = append(nodes, model.Node{Leaf: true, Value: v})
	}
	return nodes, nil
}

func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// FileFormat describes CatBoost's JSON to the format registry (model/formats).
var FileFormat = model.FileFormat{Name: "catboost", Title: "CatBoost", Exts: []string{".json"}, Parse: Parse,
	Holds:   "tree ensembles",
	Detects: "JSON with CatBoost's features_info and oblivious_trees",
	Detect: func(_ string, data []byte) (string, bool) {
		return "by its content: CatBoost's features_info and trees", Detect(data)
	}}
