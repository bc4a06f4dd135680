package xgboost

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
)

const models = "../../testdata/models"

// TestConformance runs every reference row that XGBoost itself predicted
// (testdata/gen/xgb.py) through the converted model. Each result must be within 1e-6 of
// XGBoost's and, as a float32, the very same number (the IR follows XGBoost's float32
// accumulation and float32 sigmoid when Ensemble.Float32 is set).
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name      string
		transform model.Transform
		inputs    string // the first input's name
	}{
		{"rlcc_xgb", model.TransformIdentity, "a_prev"},
		{"xgb_logistic", model.TransformSigmoid, "f0"},
		{"xgb_dart", model.TransformIdentity, "f0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := model.LoadWith(filepath.Join(models, c.name+".json"), Parse)
			if err != nil {
				t.Fatal(err)
			}
			e := m.Ensemble
			if e.Transform != c.transform || !e.Float32 || m.Inputs[0] != c.inputs {
				t.Errorf("transform %s, float32 %v, inputs %q; want %s, true, %q first",
					e.Transform, e.Float32, m.Inputs, c.transform, c.inputs)
			}
			rows := readRows(t, filepath.Join(models, c.name+".ref.csv"), m.NumInputs()+1)
			exact, nanRows, maxErr := 0, 0, 0.0
			var defaults [2]int // NaN features sent by default right, left
			for i, r := range rows {
				where := c.name + ".ref.csv/line:" + strconv.Itoa(i+2)
				x, want := r[:m.NumInputs()], r[m.NumInputs()]
				if hasNaN(x) {
					nanRows++
					countDefaults(e, x, &defaults)
				}
				got := m.Eval(nil, x)[0]
				d := math.Abs(got - want)
				maxErr = math.Max(maxErr, d)
				if d > 1e-6 {
					t.Errorf("%s: x=%v: got %v, XGBoost %v", where, x, got, want)
				}
				if float32(got) == float32(want) {
					exact++
				} else {
					t.Errorf("%s: x=%v: got float32 %v, XGBoost %v", where, x, float32(got), float32(want))
				}
			}
			t.Logf("%d rows, %d with NaN features (defaults taken: %d right, %d left): "+
				"bit-exact in float32 on %d; max |Eval - XGBoost| %g",
				len(rows), nanRows, defaults[0], defaults[1], exact, maxErr)
			if nanRows == 0 {
				t.Errorf("no reference row has a missing feature")
			}
			if c.name == "xgb_logistic" && (defaults[0] == 0 || defaults[1] == 0) {
				t.Errorf("reference rows take default directions %v (right, left); want both", defaults)
			}
		})
	}
}

func readRows(t *testing.T, path string, width int) [][]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := model.ReadCSV(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows.Data) < 1000 || len(rows.Data[0]) != width {
		t.Fatalf("%s: %d rows of width %d, want >= 1000 of width %d", path, len(rows.Data), len(rows.Data[0]), width)
	}
	return rows.Data
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

// countDefaults walks every tree for x and counts the splits on a missing feature by the
// direction they send it.
func countDefaults(e *model.Ensemble, x []float64, n *[2]int) {
	for _, tr := range e.Trees {
		nd := &tr.Nodes[0]
		for !nd.Leaf {
			if math.IsNaN(x[nd.Feature]) {
				if nd.DefaultLeft {
					n[1]++
				} else {
					n[0]++
				}
			}
			next := nd.Right
			if nd.GoesLeft(x[nd.Feature], true) {
				next = nd.Left
			}
			nd = &tr.Nodes[next]
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// tiny is a hand-written XGBoost 1.7 JSON model: one tree, x1 < 0.5 (NaN left) -> -0.25,
// else 0.75; base_score 0.5. Tests edit it with strings.Replace.
const tiny = `{"learner":{"attributes":{},"feature_names":[],"feature_types":[],
"gradient_booster":{"model":{"gbtree_model_param":{"num_parallel_tree":"1","num_trees":"1","size_leaf_vector":"0"},
"tree_info":[0],"trees":[{"base_weights":[0,0,0],"categories":[],"categories_nodes":[],"categories_segments":[],
"categories_sizes":[],"default_left":[1,0,0],"id":0,"left_children":[1,-1,-1],"loss_changes":[0,0,0],
"parents":[2147483647,0,0],"right_children":[2,-1,-1],"split_conditions":[5E-1,-2.5E-1,7.5E-1],
"split_indices":[1,0,0],"split_type":[0,0,0],"sum_hessian":[1,1,1],
"tree_param":{"num_deleted":"0","num_feature":"2","num_nodes":"3","size_leaf_vector":"0"}}]},"name":"gbtree"},
"learner_model_param":{"base_score":"5E-1","boost_from_average":"1","num_class":"0","num_feature":"2","num_target":"1"},
"objective":{"name":"reg:squarederror","reg_loss_param":{"scale_pos_weight":"1"}}},"version":[1,7,4]}`

// edit applies old -> new replacements to tiny, each of which must match exactly once.
func edit(t testing.TB, pairs ...string) []byte {
	t.Helper()
	s := tiny
	for i := 0; i < len(pairs); i += 2 {
		if strings.Count(s, pairs[i]) != 1 {
			t.Fatalf("edit: %q does not occur exactly once", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return []byte(s)
}

// fiveNodes makes tiny's tree five nodes: 0 -> (1, 2), 1 -> (3, 4), leaves 2, 3, 4, with the
// given children arrays.
func fiveNodes(t testing.TB, lefts, rights string) []byte {
	return edit(t,
		`"default_left":[1,0,0]`, `"default_left":[1,0,0,0,0]`,
		`"left_children":[1,-1,-1]`, `"left_children":`+lefts,
		`"right_children":[2,-1,-1]`, `"right_children":`+rights,
		`"split_conditions":[5E-1,-2.5E-1,7.5E-1]`, `"split_conditions":[5E-1,0,7.5E-1,1,2]`,
		`"split_indices":[1,0,0]`, `"split_indices":[1,0,0,0,0]`,
		`"split_type":[0,0,0]`, `"split_type":[0,0,0,0,0]`,
		`"num_nodes":"3"`, `"num_nodes":"5"`)
}

func TestTiny(t *testing.T) {
	m, err := Parse([]byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Inputs, ","); got != "f0,f1" {
		t.Errorf("inputs %s, want f0,f1", got)
	}
	e := m.Ensemble
	if e.Base != 0.5 || e.Transform != model.TransformIdentity || !e.Float32 || len(e.Trees) != 1 {
		t.Fatalf("ensemble %+v", e)
	}
	root := e.Trees[0].Nodes[0]
	want := model.Node{Feature: 1, Threshold: 0.5, Cmp: model.CmpLT, Left: 1, Right: 2, DefaultLeft: true, Missing: model.MissingNaN}
	if root != want {
		t.Errorf("root %+v, want %+v", root, want)
	}
	for _, c := range []struct{ x, want float64 }{
		{0.25, 0.25},
		{0.5, 1.25},           // not < 0.5: right
		{0.49999999999, 1.25}, // rounds to 0.5 in float32: right, as in XGBoost
		{float64(math.Nextafter32(0.5, 0)), 0.25}, // the float32 just below
		{math.NaN(), 0.25},                        // missing: default left
		{math.Inf(-1), 0.25},
		{math.Inf(1), 1.25},
	} {
		if got := m.Eval(nil, []float64{0, c.x})[0]; got != c.want {
			t.Errorf("x1=%v: got %v, want %v", c.x, got, c.want)
		}
	}
}

func TestAccepted(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  []byte
		check func(*model.Model) string
	}{
		{"feature names", edit(t, `"feature_names":[]`, `"feature_names":["NaN","Infinity"]`),
			func(m *model.Model) string { return strings.Join(m.Inputs, ",") + "=NaN,Infinity" }},
		{"boolean default_left", edit(t, `"default_left":[1,0,0]`, `"default_left":[false,true,false]`),
			func(m *model.Model) string { return boolStr(m.Ensemble.Trees[0].Nodes[0].DefaultLeft) + "=false" }},
		{"base_score as a list", edit(t, `"base_score":"5E-1"`, `"base_score":"[2.5E-1]"`),
			func(m *model.Model) string { return ftoa(m.Ensemble.Base) + "=0.25" }},
		{"logistic margin", edit(t, `"reg:squarederror"`, `"binary:logistic"`, `"base_score":"5E-1"`, `"base_score":"3E-1"`),
			// -logf(1/0.3f - 1), as XGBoost computes it
			func(m *model.Model) string {
				return ftoa(float64(float32(m.Ensemble.Base))) + "=" + ftoa(float64(float32(-0.84729785)))
			}},
		{"logitraw margin", edit(t, `"reg:squarederror"`, `"binary:logitraw"`, `"base_score":"5E-1"`, `"base_score":"3E-1"`),
			func(m *model.Model) string { return ftoa(m.Ensemble.Base) + "=" + ftoa(float64(float32(0.3))) }},
		// Node 3 and 4 are left over from pruning: unreachable, dropped.
		{"deleted nodes", fiveNodes(t, "[1,-1,-1,-1,-1]", "[2,-1,-1,-1,-1]"),
			func(m *model.Model) string { return itoa(len(m.Ensemble.Trees[0].Nodes)) + "=3" }},
		// Node 1 deleted, its children 3, 4 kept: renumbered 0, 1, 2.
		{"renumbered", edit(t,
			`"default_left":[1,0,0]`, `"default_left":[1,0,0,0,0]`,
			`"left_children":[1,-1,-1]`, `"left_children":[3,-1,-1,-1,-1]`,
			`"right_children":[2,-1,-1]`, `"right_children":[4,-1,-1,-1,-1]`,
			`"split_conditions":[5E-1,-2.5E-1,7.5E-1]`, `"split_conditions":[5E-1,9,9,1,2]`,
			`"split_indices":[1,0,0]`, `"split_indices":[1,0,0,0,0]`,
			`"split_type":[0,0,0]`, `"split_type":[0,0,0,0,0]`,
			`"num_nodes":"3"`, `"num_nodes":"5"`),
			func(m *model.Model) string {
				n := m.Ensemble.Trees[0].Nodes
				return itoa(len(n)) + itoa(n[0].Left) + itoa(n[0].Right) + ftoa(n[1].Value) + ftoa(n[2].Value) + "=31212"
			}},
		{"dart weights", []byte(strings.Replace(string(edit(t,
			`"gradient_booster":{"model"`, `"gradient_booster":{"name":"dart","weight_drop":[5E-1],"gbtree":{"model"`)),
			`"name":"gbtree"},`, `"name":"gbtree"}},`, 1)),
			func(m *model.Model) string { return ftoa(m.Ensemble.Trees[0].Nodes[2].Value) + "=0.375" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse(c.data)
			if err != nil {
				t.Fatal(err)
			}
			if s := c.check(m); !sameSides(s) {
				t.Errorf("got=want: %s", s)
			}
		})
	}
}

func sameSides(s string) bool {
	i := strings.LastIndex(s, "=")
	return i >= 0 && s[:i] == s[i+1:]
}

func boolStr(b bool) string { return strconv.FormatBool(b) }

// TestErrors feeds broken and unsupported models: each must give a *model.ParseError that
// names the fault, and never panic.
func TestErrors(t *testing.T) {
	real, err := os.ReadFile(filepath.Join(models, "rlcc_xgb.json"))
	if err != nil {
		t.Fatal(err)
	}
	native, err := os.ReadFile(filepath.Join(models, "rlcc_teacher.json"))
	if err != nil {
		t.Fatal(err)
	}
	noTreeType := strings.Replace(tiny, `,"split_type":[0,0,0]`, ``, 1)
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{"file is empty"}},
		{"blank", []byte(" \n\t"), []string{"file is empty"}},
		{"truncated", real[:len(real)/2], []string{"offset ", "unexpected end of JSON input"}},
		{"trailing garbage", append([]byte(tiny), "}"...), []string{"offset ", "JSON syntax"}},
		{"native nicc JSON", native, []string{"not an XGBoost JSON model", "learner"}},
		{"array", []byte(`[1,2]`), []string{"offset 0", "does not start with '{'"}},
		{"binary", []byte("\x00\x00\x00\x00binf"), []string{"does not start with '{'"}},
		// The first bytes of XGBoost 1.7's save_raw("ubj").
		{"ubjson", []byte("{L\x00\x00\x00\x00\x00\x00\x00\x07learner{L"), []string{`this is an XGBoost UBJSON model (save_model("*.ubj")); nicc reads XGBoost JSON: save it with save_model("model.json")`}},
		{"other ubjson", []byte("{i\x03abcSi\x01x}"), []string{`this is UBJSON, not JSON; nicc reads XGBoost JSON`}},
		{"NaN leaf", edit(t, `[5E-1,-2.5E-1,7.5E-1]`, `[5E-1,NaN,7.5E-1]`), []string{"tree 0 node 1: leaf value is NaN"}},
		{"Inf leaf", edit(t, `[5E-1,-2.5E-1,7.5E-1]`, `[5E-1,-2.5E-1,Infinity]`), []string{"tree 0 node 2: leaf value is +Inf"}},
		{"overflowing leaf", edit(t, `[5E-1,-2.5E-1,7.5E-1]`, `[5E-1,-2.5E-1,-1e39]`), []string{"tree 0 node 2: leaf value is -Inf"}},
		{"NaN split", edit(t, `[5E-1,-2.5E-1,7.5E-1]`, `[NaN,-2.5E-1,7.5E-1]`), []string{"tree 0 node 0: split condition is NaN"}},
		{"-Inf split", edit(t, `[5E-1,-2.5E-1,7.5E-1]`, `[-Infinity,-2.5E-1,7.5E-1]`), []string{"tree 0 node 0: split condition is -Inf"}},
		{"string leaf", edit(t, `[5E-1,-2.5E-1,7.5E-1]`, `[5E-1,"x",7.5E-1]`), []string{"is not a number"}},
		{"dangling child", edit(t, `"left_children":[1,-1,-1]`, `"left_children":[99,-1,-1]`), []string{"tree 0 node 0: left child 99 out of range"}},
		{"negative child", edit(t, `"left_children":[1,-1,-1]`, `"left_children":[-7,-1,-1]`), []string{"tree 0 node 0: left child -7 out of range"}},
		{"child is the root", fiveNodes(t, "[1,0,-1,-1,-1]", "[2,1,-1,-1,-1]"), []string{"tree 0 node 1: left child 0 out of range"}},
		{"cycle", fiveNodes(t, "[1,3,-1,1,-1]", "[2,4,-1,2,-1]"), []string{"tree 0 node 3: child 1 is reached twice (a cycle"}},
		{"self loop", fiveNodes(t, "[1,1,-1,-1,-1]", "[2,2,-1,-1,-1]"), []string{"tree 0 node 1: child 1 is reached twice"}},
		{"right not left+1", fiveNodes(t, "[1,3,-1,-1,-1]", "[2,2,-1,-1,-1]"), []string{"tree 0 node 1: right child 2 is not left child 3 + 1"}},
		{"right child out of range", fiveNodes(t, "[1,4,-1,-1,-1]", "[2,5,-1,-1,-1]"), []string{"tree 0 node 1: right child 5 out of range"}},
		{"feature out of range", edit(t, `"split_indices":[1,0,0]`, `"split_indices":[2,0,0]`), []string{"tree 0 node 0: split feature 2 out of range"}},
		{"short array", edit(t, `"split_conditions":[5E-1,-2.5E-1,7.5E-1]`, `"split_conditions":[5E-1,-2.5E-1]`), []string{"tree 0: split_conditions has 2 entries for 3 nodes"}},
		{"no array", []byte(strings.Replace(noTreeType, `"default_left":[1,0,0],`, ``, 1)), []string{"tree 0: default_left has 0 entries for 3 nodes"}},
		{"huge num_nodes", edit(t, `"num_nodes":"3"`, `"num_nodes":"99999999999"`), []string{"tree 0: num_nodes is"}},
		{"bad default_left", edit(t, `"default_left":[1,0,0]`, `"default_left":[2,0,0]`), []string{"default_left entry 2"}},
		{"child not an int32", edit(t, `"left_children":[1,-1,-1]`, `"left_children":[1,-1,4294967296]`), []string{"offset ", "left_children"}},
		{"categorical", edit(t, `"split_type":[0,0,0]`, `"split_type":[1,0,0]`), []string{"tree 0 node 0: a categorical split on feature 1 (split_type 1); nicc reads numeric splits only"}},
		// XGBoost writes NaN as a categorical node's split condition: the split is named, not the NaN.
		{"categorical NaN", edit(t, `"split_type":[0,0,0]`, `"split_type":[1,0,0]`, `[5E-1,-2.5E-1,7.5E-1]`, `[NaN,-2.5E-1,7.5E-1]`), []string{"tree 0 node 0: a categorical split on feature 1"}},
		{"unknown split_type", edit(t, `"split_type":[0,0,0]`, `"split_type":[2,0,0]`), []string{"tree 0 node 0: split_type 2 is neither numeric (0) nor categorical (1)"}},
		{"objective", edit(t, `"reg:squarederror"`, `"count:poisson"`), []string{`objective "count:poisson" is not supported`}},
		{"softprob", edit(t, `"reg:squarederror"`, `"multi:softprob"`), []string{`objective "multi:softprob" is not supported`}},
		{"num_class", edit(t, `"num_class":"0"`, `"num_class":"3"`), []string{"multi-class models are not supported (num_class is 3)"}},
		{"num_target", edit(t, `"num_target":"1"`, `"num_target":"2"`), []string{"multi-target models are not supported"}},
		{"output group", edit(t, `"tree_info":[0]`, `"tree_info":[1]`), []string{"tree 0: output group 1"}},
		{"vector leaf", edit(t, `"num_trees":"1","size_leaf_vector":"0"`, `"num_trees":"1","size_leaf_vector":"3"`), []string{"vector leaves are not supported (size_leaf_vector is 3)"}},
		{"gblinear", edit(t, `"name":"gbtree"}`, `"name":"gblinear"}`), []string{"gblinear"}},
		{"unknown booster", edit(t, `"name":"gbtree"}`, `"name":"forest"}`), []string{`gradient booster "forest" is not supported`}},
		{"dart without weights", edit(t, `"gradient_booster":{"model"`, `"gradient_booster":{"name":"dart","gbtree":{"name":"gbtree","model"`, `,"name":"gbtree"}`, `}}`),
			[]string{"dart weight_drop has 0 entries for 1 trees"}},
		{"no objective", edit(t, `"objective":{"name":"reg:squarederror",`, `"objective":{`), []string{"no objective name"}},
		{"no base_score", edit(t, `"base_score":"5E-1",`, ``), []string{"no base_score"}},
		{"NaN base_score", edit(t, `"base_score":"5E-1"`, `"base_score":"NaN"`), []string{"base_score \"NaN\" is not a finite number"}},
		{"logistic base_score", edit(t, `"reg:squarederror"`, `"binary:logistic"`, `"base_score":"5E-1"`, `"base_score":"1E0"`), []string{"base_score is 1; a logistic objective needs it in (0, 1)"}},
		{"num_trees", edit(t, `"num_trees":"1"`, `"num_trees":"2"`), []string{"num_trees is 2, but there are 1 trees"}},
		{"no trees", edit(t, `"num_trees":"1"`, `"num_trees":"0"`, `"tree_info":[0]`, `"tree_info":[]`, `"trees":[{`, `"trees":[],"x":[{`), []string{"model has no trees"}},
		{"num_feature", edit(t, `"num_feature":"2","num_target"`, `"num_feature":"0","num_target"`), []string{"num_feature is 0"}},
		{"feature_names", edit(t, `"feature_names":[]`, `"feature_names":["a"]`), []string{"1 feature_names for num_feature 2"}},
		{"old version", edit(t, `"version":[1,7,4]`, `"version":[0,90,0]`), []string{"older than 1.0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse(c.data)
			if err == nil {
				t.Fatalf("no error; model %+v", m)
			}
			var fe *model.ParseError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *model.ParseError: %v", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestLoadNamesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(p, []byte(`{"learner":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := model.LoadWith(p, Parse)
	if err == nil || !strings.HasPrefix(err.Error(), p+": ") {
		t.Errorf("Load error %v does not start with the path", err)
	}
}

// TestDetect: the sniffer recognises what Parse reads, NaN and Infinity included, and the real
// files Parse refuses by name (UBJSON, categorical splits), but not nicc's native JSON.
func TestDetect(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(models, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	real := string(read("rlcc_xgb.json"))
	withNonFinite := strings.Replace(strings.Replace(real, `"base_weights":[`, `"base_weights":[NaN,`, 1), `"loss_changes":[`, `"loss_changes":[-Infinity,`, 1)
	if withNonFinite == real {
		t.Fatal("rlcc_xgb.json has no base_weights or loss_changes to edit")
	}
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"rlcc_xgb.json", []byte(real), true},
		{"NaN and -Infinity where Parse ignores them", []byte(withNonFinite), true},
		{"xgb_small.ubj", read("xgb_small.ubj"), true},
		{"xgb_categorical.json", read("xgb_categorical.json"), true},
		{"learner in capitals, as encoding/json matches it", []byte(`{"LEARNER":{}}`), true},
		{"rlcc_teacher.json", read("rlcc_teacher.json"), false},
		{"empty object", []byte(`{}`), false},
		{"LightGBM text", []byte("tree\nversion=v3\n"), false},
	} {
		if got := Detect(c.data); got != c.want {
			t.Errorf("%s: Detect %v, want %v", c.name, got, c.want)
		}
	}
	// The NaN and -Infinity edit is one Parse reads, to the same model.
	a, err := Parse([]byte(real))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(withNonFinite))
	if err != nil {
		t.Fatalf("Parse refuses NaN where XGBoost writes it: %v", err)
	}
	ja, _ := model.Marshal(a)
	jb, _ := model.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("the edited file parses to a different model")
	}
}

// A list longer than a model may have is refused before it is decoded, in one line, with at
// most twice the file allocated (a 64 MiB file of empty trees took 4 GB).
func TestParseRefusesLongListsEarly(t *testing.T) {
	const head = `{"learner":{"objective":{"name":"reg:squarederror"},"learner_model_param":{"base_score":"0.5","num_feature":"1"},"gradient_booster":`
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty trees", modeltest.Repeat(head+`{"name":"gbtree","model":{"gbtree_model_param":{"num_trees":"1"},"trees":[`, `{}`, model.MaxTrees+1, `]}}}}`),
			"learner.gradient_booster.model.trees: over 65536 entries"},
		{"dart's empty trees", modeltest.Repeat(head+`{"name":"dart","gbtree":{"name":"gbtree","model":{"trees":[`, `{}`, model.MaxTrees+1, `]}}}}}`),
			"learner.gradient_booster.gbtree.model.trees: over 65536 entries"},
		{"empty feature names", modeltest.Repeat(`{"learner":{"feature_names":[`, `""`, 2<<20/3, `]}}`),
			"learner.feature_names: over 4096 entries"},
		{"nodes of all trees together", modeltest.Repeat(head+`{"name":"gbtree","model":{"trees":[`, `{"default_left":[`+strings.Repeat(`0,`, 127)+`0]}`, model.MaxNodes/128+1, `]}}}}`),
			"learner.gradient_booster.model.trees[].default_left: over 4194304 entries"},
	} {
		t.Run(c.name, func(t *testing.T) { modeltest.CheckRefusedSmall(t, c.data, Parse, c.want) })
	}
}

// The learner's attributes are read for best_iteration alone: 2 MiB of others decode to
// nothing (a map of them took 600 MB for 64 MiB).
func TestParseIgnoresOtherAttributes(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, `"a%d":[0],`, i)
	}
	data := []byte(`{"learner":{"attributes":{` + b.String() + `"best_iteration":"1"}}}`)
	modeltest.CheckRefusedSmall(t, data, Parse, "learner has no objective name")
}
