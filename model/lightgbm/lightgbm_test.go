package lightgbm

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
)

// repoDir holds copies of LightGBM's own models and predictions from
// ../shared/external/lightgbm (see testdata/lightgbm/README.md).
const repoDir = "../../testdata/lightgbm"

func readRepo(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readRows(t *testing.T, name string) [][]float64 {
	t.Helper()
	rows, err := model.ReadCSV(bytes.NewReader(readRepo(t, name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows.Data
}

// wrap makes a whole model of bare Tree=N blocks (as the tiny tree files are).
func wrap(objective string, numFeatures int, trees ...string) []byte {
	var b strings.Builder
	names := make([]string, numFeatures)
	infos := make([]string, numFeatures)
	for i := range names {
		names[i], infos[i] = fmt.Sprintf("f%d", i), "none"
	}
	fmt.Fprintf(&b, "tree\nversion=v3\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=%d\n", numFeatures-1)
	if objective != "" {
		fmt.Fprintf(&b, "objective=%s\n", objective)
	}
	fmt.Fprintf(&b, "feature_names=%s\nfeature_infos=%s\n\n", strings.Join(names, " "), strings.Join(infos, " "))
	for _, t := range trees {
		b.WriteString(strings.TrimRight(t, "\n"))
		b.WriteString("\n\n\n")
	}
	b.WriteString("end of trees\n\nfeature importances:\nf0=1\n")
	return []byte(b.String())
}

// small is a whole numeric model whose lines the error tests edit: split 0 is x1 <= 0.5
// (missing NaN, default left), split 1 is x0 <= 756 (missing None, default left).
const smallTree = `Tree=0
num_leaves=3
num_cat=0
split_feature=1 0
split_gain=10 5
threshold=0.5 756
decision_type=10 2
left_child=-1 -2
right_child=1 -3
leaf_value=0.54 0.35 0.38
leaf_count=200 557 243
internal_value=0 0.1
internal_count=1000 800
shrinkage=1
`

func small() []byte { return wrap("regression", 2, smallTree) }

func mustParse(t testing.TB, data []byte) *model.Model {
	t.Helper()
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), math.SmallestNonzeroFloat64)
}

func TestDartBreastCancer(t *testing.T) {
	data := readRepo(t, "lg_dart_breast_cancer.model")
	m := mustParse(t, data)
	e := m.Ensemble
	if m.NumInputs() != 30 || m.Inputs[29] != "Column_29" || len(e.Trees) != 10 ||
		e.Transform != model.TransformSigmoid || e.SigmoidScale != 1 || e.Base != 0 || e.Float32 {
		t.Fatalf("inputs %d (%q...), %d trees, transform %s scale %v base %v float32 %v",
			m.NumInputs(), m.Inputs[0], len(e.Trees), e.Transform, e.SigmoidScale, e.Base, e.Float32)
	}
	rows := readRows(t, "breast_cancer_test.tsv")
	preds := readRows(t, "lg_dart_breast_cancer_true_predictions.txt")
	if len(rows) != len(preds) || len(rows) == 0 {
		t.Fatalf("%d test rows, %d predictions", len(rows), len(preds))
	}
	worst := 0.0
	for i, x := range rows {
		got, want := m.Eval(nil, x)[0], preds[i][0]
		if r := relErr(got, want); r > 1e-9 {
			t.Errorf("row %d: got %.17g, LightGBM printed %.17g (relative error %.3g)", i+1, got, want, r)
		} else {
			worst = math.Max(worst, r)
		}
	}
	t.Logf("%d rows: max relative error vs LightGBM %.3g", len(rows), worst)

	// The file's leaf values already include each tree's shrinkage (DART renormalizes them):
	// scaling the leaves by shrinkage= again must break the match.
	var shrink []float64
	for _, s := range regexp.MustCompile(`(?m)^shrinkage=(\S+)`).FindAllStringSubmatch(string(data), -1) {
		v, err := strconv.ParseFloat(s[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		shrink = append(shrink, v)
	}
	if len(shrink) != len(e.Trees) {
		t.Fatalf("%d shrinkage lines for %d trees", len(shrink), len(e.Trees))
	}
	scaled := mustParse(t, data)
	for i := range scaled.Ensemble.Trees {
		for j := range scaled.Ensemble.Trees[i].Nodes {
			scaled.Ensemble.Trees[i].Nodes[j].Value *= shrink[i]
		}
	}
	worst = 0
	for i, x := range rows {
		worst = math.Max(worst, relErr(scaled.Eval(nil, x)[0], preds[i][0]))
	}
	if worst < 1e-3 {
		t.Errorf("applying shrinkage again still matches LightGBM (max relative error %.3g)", worst)
	}
}

func TestKDDCupRefused(t *testing.T) {
	m, err := Parse(readRepo(t, "lg_kddcup99.model"))
	var fe *model.ParseError
	if m != nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), "multiclass models (num_class=13) are not supported") {
		t.Fatalf("Parse(lg_kddcup99.model) = %v, %v; want a ParseError about multiclass", m, err)
	}
	if !strings.HasPrefix(fe.Msg, "line 3: ") || fe.Off != int64(len("tree\nversion=v2\n")) {
		t.Errorf("error at offset %d, msg %q; want line 3 at offset 16", fe.Off, fe.Msg)
	}
}

// leafOf is the value of the leaf x reaches, through the IR evaluator.
func leafOf(m *model.Model, x ...float64) float64 { return m.Eval(nil, x)[0] }

func TestTree1Leaf(t *testing.T) {
	m := mustParse(t, wrap("regression", 1, string(readRepo(t, "tree_1leaf.txt"))))
	if n := len(m.Ensemble.Trees[0].Nodes); n != 1 {
		t.Fatalf("tree has %d nodes, want 1", n)
	}
	for _, x := range []float64{0, -1, 1e300, math.NaN(), math.Inf(1)} {
		if got := leafOf(m, x); got != 0.123 {
			t.Errorf("x=%v: got %v, want 0.123 (shrinkage 1.03754e-322 is not applied again)", x, got)
		}
	}
}

func TestTree2Leaves(t *testing.T) {
	m := mustParse(t, wrap("regression", 1, string(readRepo(t, "tree_2leaves.txt"))))
	n := m.Ensemble.Trees[0].Nodes[0]
	if n.Feature != 0 || n.Threshold != 5 || n.Cmp != model.CmpLE || !n.DefaultLeft || n.Missing != model.MissingNone {
		t.Fatalf("root split is %+v, want x0 <= 5, default left, missing none", n)
	}
	const left, right = 0.43, 0.59
	for _, c := range []struct{ x, want float64 }{
		{4.9, left},
		{math.Nextafter(5, 0), left},
		{5, left}, // exactly the threshold: x <= t goes left
		{math.Nextafter(5, 6), right},
		{6, right},
		{-1e300, left},
		{1e300, right},
		{math.NaN(), left}, // missing type None: NaN reads as 0
		{math.Inf(1), right},
	} {
		if got := leafOf(m, c.x); got != c.want {
			t.Errorf("x0=%v: got %v, want %v", c.x, got, c.want)
		}
	}
}

func TestTree3LeavesCategoricalRefused(t *testing.T) {
	_, err := Parse(wrap("regression", 2, string(readRepo(t, "tree_3leaves.txt"))))
	if err == nil || !strings.Contains(err.Error(), "categorical splits are not supported (num_cat=1)") {
		t.Fatalf("err = %v, want a refusal of the categorical split", err)
	}
}

// tree3Numeric is tree_3leaves.txt with its categorical split made numerical (x1 <= 0,
// decision_type 8: missing NaN, default right), so both of its splits can be checked.
func tree3Numeric(t testing.TB) []byte {
	s := string(readRepo(t, "tree_3leaves.txt"))
	r := strings.NewReplacer("num_cat=1", "num_cat=0", "decision_type=9 2", "decision_type=8 2")
	out := r.Replace(s)
	if out == s || !strings.Contains(out, "decision_type=8 2") {
		t.Fatal("tree_3leaves.txt is not what the test expects")
	}
	return wrap("regression", 2, out)
}

func TestTree3LeavesNumeric(t *testing.T) {
	m := mustParse(t, tree3Numeric(t))
	const l0, l1, l2 = 0.54, 0.35, 0.38
	kz := zeroThreshold
	for _, c := range []struct {
		x0, x1, want float64
	}{
		// split 0: x1 <= 0 -> leaf 0, else split 1.
		{0, -1, l0},
		{0, 0, l0}, // exactly the threshold
		{0, 1, l1},
		{0, math.NaN(), l1}, // missing NaN, default right
		// LightGBM reads |x| <= kZeroThreshold as 0, so the whole band goes left at t = 0.
		{0, 1e-40, l0},
		{0, kz, l0},
		{0, math.Nextafter(kz, 1), l1},
		{0, -kz, l0},
		// split 1: x0 <= 756 -> leaf 1, else leaf 2 (missing None: NaN reads as 0).
		{755.9, 1, l1},
		{756, 1, l1}, // exactly the threshold
		{math.Nextafter(756, 757), 1, l2},
		{1e9, 1, l2},
		{math.NaN(), 1, l1},
	} {
		if got := leafOf(m, c.x0, c.x1); got != c.want {
			t.Errorf("x=(%v, %v): got %v, want %v", c.x0, c.x1, got, c.want)
		}
	}
}

func TestObjectives(t *testing.T) {
	for _, c := range []struct {
		objective string
		transform model.Transform
		scale     float64
		err       string
	}{
		{"regression", model.TransformIdentity, 0, ""},
		{"regression_l1", model.TransformIdentity, 0, ""},
		{"huber", model.TransformIdentity, 0, ""},
		{"fair", model.TransformIdentity, 0, ""},
		{"quantile", model.TransformIdentity, 0, ""},
		{"mape", model.TransformIdentity, 0, ""},
		{"l2", model.TransformIdentity, 0, ""},
		{"lambdarank", model.TransformIdentity, 0, ""},
		{"rank_xendcg", model.TransformIdentity, 0, ""},
		{"", model.TransformIdentity, 0, ""}, // no objective line: custom objective, raw score
		{"binary sigmoid:1", model.TransformSigmoid, 1, ""},
		{"binary sigmoid:0.5", model.TransformSigmoid, 0.5, ""},
		{"cross_entropy", model.TransformSigmoid, 1, ""},
		{"xentropy", model.TransformSigmoid, 1, ""},
		{"binary", 0, 0, "want sigmoid:K with K > 0"},
		{"binary sigmoid:0", 0, 0, "want sigmoid:K with K > 0"},
		{"binary sigmoid:nan", 0, 0, "want sigmoid:K with K > 0"},
		{"binary sigmoid:x", 0, 0, "is not a number"},
		{"regression sqrt", 0, 0, "sqrt output transform (reg_sqrt) is not supported"},
		{"poisson", 0, 0, `objective "poisson" is not supported`},
		{"tweedie tweedie_variance_power:1.5", 0, 0, "is not supported"},
		{"cross_entropy_lambda", 0, 0, "is not supported"},
		{"multiclass num_class:3", 0, 0, "multiclass objective"},
		{"wat", 0, 0, `unknown objective "wat"`},
	} {
		m, err := Parse(wrap(c.objective, 2, smallTree))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("objective %q: err = %v, want %q", c.objective, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("objective %q: %v", c.objective, err)
			continue
		}
		if e := m.Ensemble; e.Transform != c.transform || e.SigmoidScale != c.scale {
			t.Errorf("objective %q: transform %s scale %v, want %s %v", c.objective, e.Transform, e.SigmoidScale, c.transform, c.scale)
		}
	}
	m := mustParse(t, wrap("binary sigmoid:0.5", 2, smallTree))
	if got, want := leafOf(m, 0, 0), 1/(1+math.Exp(-0.5*0.54)); got != want {
		t.Errorf("binary sigmoid:0.5 at leaf 0.54: got %v, want %v", got, want)
	}
}

func TestErrors(t *testing.T) {
	base := string(small())
	edit := func(old, new string) []byte {
		if !strings.Contains(base, old) {
			t.Fatalf("the small model has no %q", old)
		}
		return []byte(strings.Replace(base, old, new, 1))
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "the file is empty"},
		{"blank", []byte("\n\r\n"), "the file is empty"},
		{"not lightgbm", []byte("{\"format\": 1}"), `first line is "{\"format\": 1}", want "tree"`},
		{"no version", edit("version=v3\n", ""), "the header has no version"},
		{"version 1", edit("version=v3", "version=v1"), `model version "v1" is not supported`},
		{"no num_class", edit("num_class=1\n", ""), "the header has no num_class"},
		{"multiclass", edit("num_class=1", "num_class=23"), "multiclass models (num_class=23) are not supported"},
		{"trees per iteration", edit("num_tree_per_iteration=1", "num_tree_per_iteration=3"), "3 trees per iteration"},
		{"average_output", edit("label_index=0\n", "label_index=0\naverage_output\n"), "random-forest models (average_output) are not supported"},
		{"duplicate header key", edit("label_index=0\n", "label_index=0\nversion=v3\n"), `"version" appears twice`},
		{"max_feature_idx", edit("max_feature_idx=1", "max_feature_idx=99999999"), "max_feature_idx is 99999999"},
		{"bad max_feature_idx", edit("max_feature_idx=1", "max_feature_idx=one"), `max_feature_idx: "one" is not a 32-bit integer`},
		{"feature_names count", edit("feature_names=f0 f1", "feature_names=f0"), "feature_names has 1 names, want max_feature_idx+1 = 2"},
		{"no feature_names", edit("feature_names=f0 f1\n", ""), "the header has no feature_names"},
		{"no trees", edit(smallTree, ""), "the model has no trees"},
		{"no end of trees", []byte(strings.Split(base, "end of trees")[0]), `ends before "end of trees"`},
		{"junk between trees", edit("\nend of trees", "\nwhat\nend of trees"), `want "Tree=N" or "end of trees", got "what"`},
		{"bad tree index", edit("Tree=0", "Tree=x"), `"Tree=x": the tree index is not a number`},
		{"not key=value", edit("shrinkage=1", "shrinkage"), `want key=value, got "shrinkage"`},
		{"duplicate tree key", edit("shrinkage=1", "shrinkage=1\nnum_leaves=2"), "num_leaves appears twice"},
		{"no num_leaves", edit("num_leaves=3\n", ""), "Tree=0: the tree has no num_leaves"},
		{"zero leaves", edit("num_leaves=3", "num_leaves=0"), "num_leaves is 0, want 1.."},
		{"huge num_leaves", edit("num_leaves=3", "num_leaves=2000000000"), "num_leaves is 2000000000, want 1..2097152"},
		{"num_leaves overflow", edit("num_leaves=3", "num_leaves=99999999999"), `num_leaves: "99999999999" is not a 32-bit integer`},
		{"num_leaves mismatch", edit("num_leaves=3", "num_leaves=4"), "leaf_value has 3 entries, want 4"},
		{"categorical num_cat", edit("num_cat=0", "num_cat=2"), "categorical splits are not supported (num_cat=2)"},
		{"categorical decision_type", edit("decision_type=10 2", "decision_type=11 2"), "categorical splits are not supported (decision_type[0]=11)"},
		{"missing type 3", edit("decision_type=10 2", "decision_type=14 2"), "missing type 3"},
		{"unknown decision bits", edit("decision_type=10 2", "decision_type=10 18"), "decision_type[1] is 18, which sets bits"},
		{"negative decision_type", edit("decision_type=10 2", "decision_type=10 -2"), "decision_type[1] is -2"},
		{"linear tree", edit("shrinkage=1", "shrinkage=1\nis_linear=1"), "linear trees (is_linear=1) are not supported"},
		{"NaN leaf", edit("leaf_value=0.54 0.35 0.38", "leaf_value=0.54 nan 0.38"), `leaf_value[1] is "nan", want a finite number`},
		{"Inf leaf", edit("leaf_value=0.54 0.35 0.38", "leaf_value=0.54 0.35 -inf"), `leaf_value[2] is "-inf", want a finite number`},
		{"overflowing leaf", edit("leaf_value=0.54 0.35 0.38", "leaf_value=1e400 0.35 0.38"), `leaf_value[0] is "1e400", want a finite number`},
		{"bad leaf", edit("leaf_value=0.54 0.35 0.38", "leaf_value=0.54 0.35 x"), `leaf_value[2] = "x" is not a number`},
		{"NaN threshold", edit("threshold=0.5 756", "threshold=NaN 756"), `threshold[0] is "NaN", want a finite number`},
		{"Inf threshold", edit("threshold=0.5 756", "threshold=0.5 +Inf"), `threshold[1] is "+Inf", want a finite number`},
		{"no threshold", edit("threshold=0.5 756\n", ""), "Tree=0: the tree has no threshold"},
		{"short left_child", edit("left_child=-1 -2", "left_child=-1"), "Tree=0: left_child has 1 entries, want 2"},
		{"long right_child", edit("right_child=1 -3", "right_child=1 -3 -4"), "Tree=0: right_child has 3 entries, want 2"},
		{"short split_feature", edit("split_feature=1 0", "split_feature=1"), "split_feature has 1 entries, want 2"},
		{"short threshold", edit("threshold=0.5 756", "threshold=0.5"), "threshold has 1 entries, want 2"},
		{"short decision_type", edit("decision_type=10 2", "decision_type=10"), "decision_type has 1 entries, want 2"},
		{"split_feature range", edit("split_feature=1 0", "split_feature=2 0"), "split_feature[0] is 2, want 0..1"},
		{"dangling split child", edit("right_child=1 -3", "right_child=2 -3"), "right_child[0] is 2: no such node (splits 0..1, leaves -1..-3)"},
		{"dangling leaf child", edit("left_child=-1 -2", "left_child=-1 -4"), "left_child[1] is -4: no such node"},
		{"cycle", edit("right_child=1 -3", "right_child=1 1"), "split 1 is reached twice (a cycle or a shared child)"},
		{"cycle to root", edit("right_child=1 -3", "right_child=1 0"), "split 0 is reached twice (a cycle or a shared child)"},
		{"shared leaf", edit("left_child=-1 -2", "left_child=-1 -1"), "leaf 0 is reached twice"},
		{"orphan split", edit("right_child=1 -3", "right_child=-3 -2"), "split 1 is unreachable from the root"},
		{"tree_sizes count", edit("feature_infos=none none\n", "feature_infos=none none\ntree_sizes=100 200\n"), "tree_sizes lists 2 trees, but the file has 1"},
		{"tree_sizes value", edit("feature_infos=none none\n", "feature_infos=none none\ntree_sizes=-5\n"), `tree_sizes: "-5" is not a size`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse(c.data)
			if err == nil {
				t.Fatalf("Parse succeeded (%d trees), want an error containing %q", len(m.Ensemble.Trees), c.want)
			}
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *model.ParseError", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if fe.Off >= 0 && !strings.HasPrefix(fe.Msg, "line ") {
				t.Errorf("error %q has an offset but no line number", err)
			}
		})
	}
}

// An unreachable split with a cycle among unreachable nodes is found without looping.
func TestDisconnectedCycle(t *testing.T) {
	tree := `Tree=0
num_leaves=4
num_cat=0
split_feature=0 0 0
threshold=1 2 3
decision_type=2 2 2
left_child=-1 2 1
right_child=-2 -3 -4
leaf_value=1 2 3 4
`
	_, err := Parse(wrap("regression", 1, tree))
	if err == nil || !strings.Contains(err.Error(), "split 1 is unreachable from the root") {
		t.Fatalf("err = %v, want split 1 unreachable", err)
	}
}

// The error names the line and its byte offset, in a real file.
func TestErrorLocation(t *testing.T) {
	data := readRepo(t, "lg_dart_breast_cancer.model")
	s := string(data)
	tree3 := strings.Index(s, "Tree=3\n")
	i := tree3 + strings.Index(s[tree3:], "\nleft_child=") + 1
	j := i + strings.IndexByte(s[i:], '\n')
	lineNo := strings.Count(s[:i], "\n") + 1
	// Drop the last entry of Tree=3's left_child.
	bad := s[:i] + s[i:j][:strings.LastIndexByte(s[i:j], ' ')] + s[j:]
	_, err := Parse([]byte(bad))
	var fe *model.ParseError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a ParseError", err)
	}
	want := fmt.Sprintf("line %d: Tree=3: left_child has 19 entries, want 20", lineNo)
	if fe.Msg != want || fe.Off != int64(i) {
		t.Fatalf("got offset %d %q, want offset %d %q", fe.Off, fe.Msg, i, want)
	}
}

// validPrefix says whether a prefix of a whole model is itself a whole model: it must reach
// the "end of trees" line.
func validPrefix(prefix string) bool {
	k := strings.Index(prefix, "\nend of trees")
	if k < 0 {
		return false
	}
	rest := prefix[k+len("\nend of trees"):]
	return rest == "" || rest[0] == '\n' || rest[0] == '\r'
}

func checkPrefixes(t *testing.T, name string, data []byte, cuts []int) {
	t.Helper()
	valid := 0
	for _, n := range cuts {
		m, err := Parse(data[:n])
		if want := validPrefix(string(data[:n])); want != (err == nil) {
			t.Errorf("%s cut at byte %d: err = %v, want valid = %v", name, n, err, want)
			continue
		}
		if err != nil {
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Errorf("%s cut at byte %d: error %T is not a ParseError", name, n, err)
			}
			continue
		}
		valid++
		if err := m.Validate(); err != nil {
			t.Errorf("%s cut at byte %d: %v", name, n, err)
		}
	}
	if valid == 0 && validPrefix(string(data)) {
		t.Errorf("%s: no prefix parsed, not even the whole file", name)
	}
}

func lineCuts(data []byte) []int {
	cuts := []int{0}
	for i, c := range data {
		if c == '\n' {
			cuts = append(cuts, i+1)
		}
	}
	if cuts[len(cuts)-1] != len(data) {
		cuts = append(cuts, len(data))
	}
	return cuts
}

func byteCuts(data []byte) []int {
	cuts := make([]int, len(data)+1)
	for i := range cuts {
		cuts[i] = i
	}
	return cuts
}

func TestTruncated(t *testing.T) {
	// tree_3leaves.txt is categorical, so no prefix of it (wrapped or bare) is a model.
	for _, data := range [][]byte{readRepo(t, "tree_3leaves.txt"), wrap("regression", 2, string(readRepo(t, "tree_3leaves.txt")))} {
		for _, n := range lineCuts(data) {
			if m, err := Parse(data[:n]); err == nil {
				t.Errorf("tree_3leaves cut at byte %d parsed: %+v", n, m)
			}
		}
	}
	num := tree3Numeric(t)
	checkPrefixes(t, "tree_3leaves (numeric)", num, byteCuts(num))
	two := wrap("regression", 1, string(readRepo(t, "tree_2leaves.txt")))
	checkPrefixes(t, "tree_2leaves", two, byteCuts(two))
	dart := readRepo(t, "lg_dart_breast_cancer.model")
	checkPrefixes(t, "lg_dart_breast_cancer.model", dart, lineCuts(dart))
}

// lgbPredictRaw is LightGBM's prediction path, transcribed from its C++ independently of the
// IR: the predictors keep a feature only if |x| > kZeroThreshold or x is NaN (c_api.cpp
// RowPairFunctionFromDenseMatrix, parser.hpp), then each tree walks from node 0 with
// NumericalDecision (tree.h) until a child is negative, and the raw scores are summed in order.
func lgbPredictRaw(trees []*rawTree, x []float64) float64 {
	in := make([]float64, len(x))
	for i, v := range x {
		if math.Abs(v) > zeroThreshold || math.IsNaN(v) {
			in[i] = v
		}
	}
	sum := 0.0
	for _, t := range trees {
		if t.numLeaves == 1 {
			sum += t.leafValue[0]
			continue
		}
		node := 0
		for node >= 0 {
			fval := in[t.splitFeature[node]]
			dt := t.decisionType[node]
			missing := (dt >> 2) & 3
			if math.IsNaN(fval) && missing != 2 {
				fval = 0
			}
			isZero := fval >= -zeroThreshold && fval <= zeroThreshold
			switch {
			case (missing == 1 && isZero) || (missing == 2 && math.IsNaN(fval)):
				if dt&2 != 0 {
					node = t.left[node]
				} else {
					node = t.right[node]
				}
			case fval <= t.threshold[node]:
				node = t.left[node]
			default:
				node = t.right[node]
			}
		}
		sum += t.leafValue[^node]
	}
	return sum
}

func rawScore(m *model.Model, x []float64) float64 {
	s := m.Ensemble.Base
	for i := range m.Ensemble.Trees {
		s += m.Ensemble.Trees[i].Leaf(x, false).Value
	}
	return s
}

// probes are inputs at and around every threshold of the trees, the zero band and NaN.
func probes(trees []*rawTree) []float64 {
	kz := zeroThreshold
	vals := []float64{0, math.Copysign(0, -1), 1e-40, -1e-40, kz, -kz, math.Nextafter(kz, 1), math.Nextafter(-kz, -1),
		1, -1, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, t := range trees {
		for _, th := range t.threshold {
			vals = append(vals, th, math.Nextafter(th, math.Inf(1)), math.Nextafter(th, math.Inf(-1)))
		}
	}
	return vals
}

// sameAsLightGBM checks the IR's raw score against lgbPredictRaw on base and on base with each
// feature in turn set to each probe value.
func sameAsLightGBM(t testing.TB, data []byte, base [][]float64) {
	t.Helper()
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	_, trees, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(base) == 0 {
		base = [][]float64{make([]float64, m.NumInputs())}
	}
	pv := probes(trees)
	n := 0
	check := func(x []float64) {
		n++
		if got, want := rawScore(m, x), lgbPredictRaw(trees, x); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("x=%v: IR raw score %v, LightGBM's decision path %v", x, got, want)
		}
	}
	for _, b := range base {
		check(b)
		x := append([]float64(nil), b...)
		for f := range x {
			for _, v := range pv {
				x[f] = v
				check(x)
			}
			x[f] = b[f]
		}
	}
	if testing.Verbose() {
		t.Logf("%d inputs agree bit for bit", n)
	}
}

func TestSameAsLightGBMDecisions(t *testing.T) {
	t.Run("dart", func(t *testing.T) {
		sameAsLightGBM(t, readRepo(t, "lg_dart_breast_cancer.model"), readRows(t, "breast_cancer_test.tsv")[:8])
	})
	t.Run("tiny", func(t *testing.T) {
		sameAsLightGBM(t, wrap("regression", 1, string(readRepo(t, "tree_2leaves.txt")), string(readRepo(t, "tree_1leaf.txt"))), nil)
		sameAsLightGBM(t, tree3Numeric(t), nil)
	})
	// Thresholds inside LightGBM's zero band, which its trainer never writes but a file may:
	// each missing type, both default directions.
	t.Run("zero band", func(t *testing.T) {
		var trees []string
		for i, th := range []string{"0", "-0", "1e-40", "-1e-40", "1.0000000180025095e-35", "-1.0000000180025095e-35", "5e-36", "-5e-36", "1e-30", "-1e-30"} {
			for _, dt := range []int{0, 2, 4, 6, 8, 10} {
				trees = append(trees, fmt.Sprintf("Tree=%d\nnum_leaves=2\nnum_cat=0\nsplit_feature=0\nthreshold=%s\ndecision_type=%d\nleft_child=-1\nright_child=-2\nleaf_value=%d %d\n",
					len(trees), th, dt, 1<<(2*i), 2<<(2*i)))
			}
		}
		sameAsLightGBM(t, wrap("regression", 1, trees...), nil)
	})
}

func TestLoad(t *testing.T) {
	m, err := model.LoadWith(filepath.Join(repoDir, "lg_dart_breast_cancer.model"), Parse)
	if err != nil || len(m.Ensemble.Trees) != 10 || !strings.Contains(m.Doc, "binary sigmoid:1") {
		t.Fatalf("Load: %v, %v", m, err)
	}
	_, err = model.LoadWith(filepath.Join(repoDir, "tree_2leaves.txt"), Parse)
	var fe *model.ParseError
	if !errors.As(err, &fe) || fe.File == "" || !strings.Contains(err.Error(), "tree_2leaves.txt: offset 0: line 1: not a LightGBM text model") {
		t.Fatalf("model.LoadWith(bare tree, Parse) = %v", err)
	}
}

// Header and tree lines Parse does not read are skipped, not stored: 2 MiB of them allocate
// at most twice the file (a map entry a line took 27 times a 64 MiB file).
func TestParseSkipsUnreadLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("tree\n")
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "k%x\n", i)
	}
	modeltest.CheckRefusedSmall(t, []byte(b.String()), Parse, "the header has no version")
	tree := "tree\nversion=v3\nnum_class=1\nmax_feature_idx=0\nfeature_names=a\n\nTree=0\nnum_leaves=1\nnum_cat=0\nleaf_value=1\n"
	b.Reset()
	b.WriteString(tree)
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "k%x=\n", i)
	}
	modeltest.CheckRefusedSmall(t, []byte(b.String()), Parse, "the file ends before")
}
