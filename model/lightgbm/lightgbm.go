// Package lightgbm reads LightGBM's text model format (model files versions v2, v3 and v4, as
// Booster.save_model and the CLI write them) into nicc's float IR.
//
// Supported: one tree per iteration (regression, ranking, binary and cross-entropy objectives),
// numerical splits with every LightGBM missing type, gbdt, goss and dart boosting (the file's leaf
// values already carry each tree's shrinkage). Refused with an error: multiclass models,
// categorical splits, linear trees, random-forest averaging (average_output), and objectives
// whose output transform the IR cannot express (poisson, gamma, tweedie, cross_entropy_lambda,
// regression with sqrt).
//
// The IR's tree keeps LightGBM's numbering: IR node i < num_leaves-1 is LightGBM split i (the
// root is split 0), and IR node num_leaves-1+j is LightGBM leaf j.
package lightgbm

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/model"
)

// zeroThreshold is LightGBM's kZeroThreshold (meta.h: const double kZeroThreshold = 1e-35f).
var zeroThreshold = float64(float32(1e-35))

// decision_type bits (LightGBM tree.h).
const (
	catMask         = 1 // kCategoricalMask
	defaultLeftMask = 2 // kDefaultLeftMask
	missingShift    = 2 // missing type is (decision_type >> 2) & 3
	// decisionBits is every bit LightGBM defines; others are refused.
	decisionBits = 0xf
)

// LightGBM's MissingType values.
const (
	lgMissingNone = 0
	lgMissingZero = 1
	lgMissingNaN  = 2
)

// Parse reads a LightGBM text model. Bad input gives a *model.ParseError whose Off is the byte
// offset of the offending line and whose Msg starts with its line number; the returned model has
// passed Validate.
func Parse(data []byte) (*model.Model, error) {
	if len(data) > model.MaxFileBytes {
		return nil, model.Errorf("model is over the %d MiB limit", model.MaxFileBytes>>20)
	}
	h, trees, err := parse(data)
	if err != nil {
		return nil, err
	}
	ens := &model.Ensemble{Transform: h.transform, SigmoidScale: h.sigmoidScale}
	for _, t := range trees {
		ens.Trees = append(ens.Trees, t.toIR())
	}
	m := &model.Model{
		Version:  model.NativeVersion,
		Doc:      fmt.Sprintf("LightGBM %s text model, objective %s, %d trees", h.version, shorten(h.objective), len(ens.Trees)),
		Inputs:   h.names,
		Ensemble: ens,
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// headerKeys and treeKeys are the keys Parse reads, of the header and of a tree; the others do
// not change predictions and are skipped unstored.
var (
	headerKeys = keySet("version", "num_class", "num_tree_per_iteration", "average_output", "max_feature_idx", "feature_names", "objective", "tree_sizes")
	treeKeys   = keySet("num_leaves", "num_cat", "is_linear", "leaf_value", "split_feature", "threshold", "decision_type", "left_child", "right_child")
)

func keySet(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// parse reads the header and the trees, checking everything the IR conversion relies on.
func parse(data []byte) (*header, []*rawTree, error) {
	p := &parser{lines: lineReader{data: string(data)}} // one copy, which every line's text shares
	h, err := p.header()
	if err != nil {
		return nil, nil, err
	}
	var trees []*rawTree
	var end line
	nodes := 0
	for {
		l, ok := p.lines.next()
		if !ok {
			return nil, nil, p.errAt(p.lines.eof(), "the file ends before \"end of trees\" (truncated?)")
		}
		switch {
		case l.text == "":
			continue
		case l.text == "end of trees":
			end = l
		case strings.HasPrefix(l.text, "Tree="):
			if len(trees) == model.MaxTrees {
				return nil, nil, p.errAt(l, "the model has over %d trees", model.MaxTrees)
			}
			t, err := p.tree(l, h.numInputs, model.MaxNodes-nodes)
			if err != nil {
				return nil, nil, err
			}
			nodes += 2*t.numLeaves - 1
			trees = append(trees, t)
			continue
		default:
			return nil, nil, p.errAt(l, "want \"Tree=N\" or \"end of trees\", got %s", quote(l.text))
		}
		break // end of trees; what follows (importances, parameters) does not change predictions
	}
	if len(trees) == 0 {
		return nil, nil, p.errAt(end, "the model has no trees")
	}
	if h.treeSizes >= 0 && h.treeSizes != len(trees) {
		return nil, nil, p.errAt(h.treeSizesLine, "tree_sizes lists %d trees, but the file has %d", h.treeSizes, len(trees))
	}
	return h, trees, nil
}

// line is one line of the file, without its line ending.
type line struct {
	num  int   // 1-based
	off  int64 // byte offset of its first character
	text string
}

type lineReader struct {
	data string
	pos  int
	num  int
}

func (r *lineReader) next() (line, bool) {
	if r.pos >= len(r.data) {
		return line{}, false
	}
	rest := r.data[r.pos:]
	n := strings.IndexByte(rest, '\n')
	adv := n + 1
	if n < 0 {
		n, adv = len(rest), len(rest)
	}
	text := rest[:n]
	text = strings.TrimSuffix(text, "\r")
	r.num++
	l := line{num: r.num, off: int64(r.pos), text: text}
	r.pos += adv
	return l, true
}

// peek returns the next line without consuming it.
func (r *lineReader) peek() (line, bool) {
	c := *r
	return c.next()
}

// eof is a pseudo-line just past the end, for errors about missing content.
func (r *lineReader) eof() line { return line{num: r.num + 1, off: int64(len(r.data))} }

type parser struct {
	lines lineReader
}

func (p *parser) errAt(l line, format string, args ...any) error {
	return &model.ParseError{Off: l.off, Msg: fmt.Sprintf("line %d: ", l.num) + fmt.Sprintf(format, args...)}
}

// quote shows a piece of the input in an error, cut short.
func quote(s string) string { return strconv.Quote(shorten(s)) }

func shorten(s string) string {
	const max = 48
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// field is one key=value line.
type field struct {
	line
	val string
}

type header struct {
	version       string
	objective     string
	transform     model.Transform
	sigmoidScale  float64
	numInputs     int
	names         []string
	treeSizes     int // -1 when absent
	treeSizesLine line
}

// header reads everything before the first tree: the "tree" line and key=value lines.
func (p *parser) header() (*header, error) {
	var first line
	for {
		l, ok := p.lines.next()
		if !ok {
			return nil, p.errAt(p.lines.eof(), "not a LightGBM text model: the file is empty")
		}
		if strings.TrimSpace(l.text) != "" {
			first = l
			break
		}
	}
	if first.text != "tree" {
		return nil, p.errAt(first, "not a LightGBM text model: first line is %s, want \"tree\"", quote(first.text))
	}
	kv := map[string]field{}
	for {
		l, ok := p.lines.peek()
		if !ok || strings.HasPrefix(l.text, "Tree=") || l.text == "end of trees" {
			break
		}
		p.lines.next()
		if l.text == "" {
			continue
		}
		k, v, _ := strings.Cut(l.text, "=")
		if !headerKeys[k] {
			continue // keeping every key would cost a map entry of about 100 bytes a line
		}
		if _, dup := kv[k]; dup {
			return nil, p.errAt(l, "%s appears twice", quote(k))
		}
		kv[k] = field{l, v}
	}
	end := p.lines.eof()
	if l, ok := p.lines.peek(); ok {
		end = l
	}
	need := func(k string) (field, error) {
		f, ok := kv[k]
		if !ok {
			return f, p.errAt(end, "the header has no %s", k)
		}
		return f, nil
	}
	h := &header{treeSizes: -1}

	f, err := need("version")
	if err != nil {
		return nil, err
	}
	switch f.val {
	case "v2", "v3", "v4":
		h.version = f.val
	default:
		return nil, p.errAt(f.line, "model version %s is not supported (want v2, v3 or v4)", quote(f.val))
	}

	if f, err = need("num_class"); err != nil {
		return nil, err
	}
	nc, err := p.atoi(f, f.val)
	if err != nil {
		return nil, err
	}
	if nc != 1 {
		if nc > 1 {
			return nil, p.errAt(f.line, "multiclass models (num_class=%d) are not supported", nc)
		}
		return nil, p.errAt(f.line, "num_class is %d", nc)
	}
	if f, ok := kv["num_tree_per_iteration"]; ok {
		n, err := p.atoi(f, f.val)
		if err != nil {
			return nil, err
		}
		if n != 1 {
			return nil, p.errAt(f.line, "models with %d trees per iteration are not supported (want 1)", n)
		}
	}

	if f, ok := kv["average_output"]; ok {
		return nil, p.errAt(f.line, "random-forest models (average_output) are not supported")
	}

	if f, err = need("max_feature_idx"); err != nil {
		return nil, err
	}
	mfi, err := p.atoi(f, f.val)
	if err != nil {
		return nil, err
	}
	if mfi < 0 || mfi >= model.MaxInputs {
		return nil, p.errAt(f.line, "max_feature_idx is %d, want 0..%d", mfi, model.MaxInputs-1)
	}
	h.numInputs = mfi + 1

	if f, err = need("feature_names"); err != nil {
		return nil, err
	}
	if n := countFields(f.val); n != h.numInputs {
		return nil, p.errAt(f.line, "feature_names has %d names, want max_feature_idx+1 = %d", n, h.numInputs)
	}
	h.names = strings.Fields(f.val)

	if f, ok := kv["objective"]; ok {
		if err := p.objective(h, f); err != nil {
			return nil, err
		}
	} else {
		// No objective line: a custom objective; LightGBM predicts the raw score.
		h.objective = "none (raw score)"
	}

	if f, ok := kv["tree_sizes"]; ok {
		h.treeSizes = countFields(f.val)
		h.treeSizesLine = f.line
		for tok := range strings.FieldsSeq(f.val) {
			if _, err := strconv.ParseUint(tok, 10, 63); err != nil {
				return nil, p.errAt(f.line, "tree_sizes: %s is not a size", quote(tok))
			}
		}
	}
	return h, nil
}

// objective maps LightGBM's objective line to the ensemble's output transform
// (ObjectiveFunction::ConvertOutput of each objective).
func (p *parser) objective(h *header, f field) error {
	h.objective = f.val
	toks := strings.Fields(f.val)
	if len(toks) == 0 {
		return p.errAt(f.line, "objective is empty")
	}
	name, params := toks[0], toks[1:]
	// ParseObjectiveAlias (config.h), for the names that matter here.
	switch name {
	case "regression_l2", "mean_squared_error", "mse", "l2", "l2_root", "root_mean_squared_error", "rmse":
		name = "regression"
	case "mean_absolute_error", "l1", "mae":
		name = "regression_l1"
	case "mean_absolute_percentage_error":
		name = "mape"
	case "xentropy":
		name = "cross_entropy"
	case "xentlambda":
		name = "cross_entropy_lambda"
	case "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart":
		name = "rank_xendcg"
	case "none", "null", "na":
		name = "custom"
	}
	switch name {
	case "regression", "regression_l1", "huber", "fair", "quantile", "mape":
		for _, t := range params {
			if t == "sqrt" {
				return p.errAt(f.line, "objective %s: the sqrt output transform (reg_sqrt) is not supported", quote(f.val))
			}
		}
		h.transform = model.TransformIdentity
	case "lambdarank", "rank_xendcg", "custom":
		h.transform = model.TransformIdentity
	case "binary":
		k := math.NaN()
		for _, t := range params {
			if v, ok := strings.CutPrefix(t, "sigmoid:"); ok {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return p.errAt(f.line, "objective %s: sigmoid %s is not a number", quote(f.val), quote(v))
				}
				k = x
			}
		}
		if !(k > 0) || math.IsInf(k, 0) {
			return p.errAt(f.line, "objective %s: want sigmoid:K with K > 0", quote(f.val))
		}
		h.transform, h.sigmoidScale = model.TransformSigmoid, k
	case "cross_entropy":
		h.transform, h.sigmoidScale = model.TransformSigmoid, 1
	case "multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr":
		return p.errAt(f.line, "multiclass objective %s is not supported", quote(f.val))
	case "poisson", "gamma", "tweedie", "cross_entropy_lambda":
		return p.errAt(f.line, "objective %s is not supported: its output transform (exp or log1p(exp)) has no IR form", quote(f.val))
	default:
		return p.errAt(f.line, "unknown objective %s", quote(f.val))
	}
	return nil
}

func (p *parser) atoi(f field, s string) (int, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, p.errAt(f.line, "%s: %s is not a 32-bit integer", f.key(), quote(s))
	}
	return int(v), nil
}

func (f field) key() string {
	k, _, _ := strings.Cut(f.text, "=")
	return k
}

// countFields counts space-separated tokens without allocating.
func countFields(s string) int {
	n := 0
	for range strings.FieldsSeq(s) {
		n++
	}
	return n
}

// FileFormat is LightGBM's text model as nicc's format registry knows it: by its first
// line, "tree".
var FileFormat = model.FileFormat{Name: "lightgbm", Title: "LightGBM", Exts: []string{".txt", ".model"}, Parse: Parse,
	Holds:   "tree ensembles",
	Detects: "text whose first line is tree",
	Detect: func(_ string, data []byte) (string, bool) {
		t := bytes.TrimLeft(data, " \t\r\n")
		return "by its first line, tree", bytes.HasPrefix(t, []byte("tree\n")) || bytes.HasPrefix(t, []byte("tree\r\n"))
	}}
