package model

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnumsHaveNames(t *testing.T) {
	check := func(what string, n int, name func(int) string) {
		for i := 0; i < n; i++ {
			if s := name(i); s == "" || strings.HasPrefix(s, "enum(") {
				t.Errorf("%s %d has no name", what, i)
			}
		}
	}
	check("kind", int(kindEnd), func(i int) string { return Kind(i).String() })
	check("op", int(opEnd), func(i int) string { return LayerOp(i).String() })
	check("activation", int(actEnd), func(i int) string { return Activation(i).String() })
	check("transform", int(transformEnd), func(i int) string { return Transform(i).String() })
	check("cmp", int(cmpEnd), func(i int) string { return Cmp(i).String() })
	check("missing", int(missingEnd), func(i int) string { return Missing(i).String() })
}

// awkward are float64 values whose bits a careless encoder loses.
var awkward = []float64{
	-0.0, 5e-324, -math.MaxFloat64, 0.1, 1.0 / 3, math.Nextafter(1, 2), 123456789.123456789e-300,
	float64(float32(0.1)),
}

func mixedModels() []*Model {
	mlp := &Model{
		Name: "mlp", Inputs: []string{"a", "b"},
		Layers: []Layer{
			{Op: OpDense, In: 2, Out: 4, Act: ActLeakyReLU, Alpha: 0.01,
				W: [][]float64{{awkward[0], awkward[1]}, {awkward[2], awkward[3]}, {awkward[4], awkward[5]}, {awkward[6], awkward[7]}},
				B: []float64{-0.0, 1, 2, 3}},
			{Op: OpLSTM, In: 4, Out: 1, W: [][]float64{{1, 2, 3, 4}, {-1, -2, -3, -4}, {0.5, 0.5, 0.5, 0.5}, {0, 0, 0, -0.0}},
				R: [][]float64{{0.1}, {0.2}, {0.3}, {0.4}}, B: []float64{1, 2, 3, 4}, RB: []float64{-1, -2, -3, -4}},
			{Op: OpDense, In: 1, Out: 1, W: [][]float64{{2}}, Act: ActClip, Lo: -0.0, Hi: 0.5},
			{Op: OpDense, In: 1, Out: 1, W: [][]float64{{2}}, Act: ActSigmoid},
		},
	}
	trees := &Model{
		Name: "trees", Inputs: []string{"x", "y"},
		Ensemble: &Ensemble{Base: -0.0, Transform: TransformSigmoid, SigmoidScale: 2, Float32: true, Trees: []Tree{
			{Nodes: []Node{{Leaf: true, Value: -0.0}}},
			{Nodes: []Node{
				{Feature: 1, Threshold: awkward[3], Cmp: CmpGT, Left: 2, Right: 1, DefaultLeft: true, Missing: MissingZero},
				{Leaf: true, Value: awkward[4]},
				{Feature: 0, Threshold: -0.0, Cmp: CmpLE, Left: 3, Right: 4, Missing: MissingNone},
				{Leaf: true, Value: 1},
				{Leaf: true, Value: 2},
			}},
		}},
	}
	return []*Model{mlp, trees}
}

func TestJSONRoundTripKeepsBits(t *testing.T) {
	bits := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	for _, m := range mixedModels() {
		b, err := Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", m.Name, err, b)
		}
		want := *m
		want.Version = NativeVersion
		if d := cmp.Diff(&want, got, bits); d != "" {
			t.Errorf("%s: round trip changed the model (-want +got):\n%s", m.Name, d)
		}
		again, _ := Marshal(got)
		if string(again) != string(b) {
			t.Errorf("%s: second write differs from the first", m.Name)
		}
	}
}

func TestShippedTeacherLoads(t *testing.T) {
	m, err := Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Summarize().Shape; got != "4 → 12 relu → 12 relu → 1 tanh" {
		t.Errorf("shape = %q", got)
	}
	if !strings.Contains(m.Doc, "trained by nicc train") {
		t.Errorf("teacher doc does not say how it was trained: %q", m.Doc)
	}
}

func TestUnmarshalRejects(t *testing.T) {
	good, err := os.ReadFile("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	tree := func(nodes string) string {
		return `{"format":"nicc.model/v1","inputs":["x"],"ensemble":{"base":0,"transform":"identity","trees":[{"nodes":[` + nodes + `]}]}}`
	}
	dense := func(layer string) string {
		return `{"format":"nicc.model/v1","inputs":["x","y"],"layers":[` + layer + `]}`
	}
	cases := []struct{ name, in, want string }{
		{"truncated", string(good[:len(good)/2]), "unexpected EOF"},
		{"not json", "\x00\x01garbage", "offset"},
		{"wrong format", `{"format":"nicc.model/v9","inputs":["x"]}`, `format is "nicc.model/v9"`},
		{"unknown field", `{"format":"nicc.model/v1","inputs":["x"],"extra":1}`, `unknown field "extra"`},
		{"no body", `{"format":"nicc.model/v1","inputs":["x"]}`, "neither layers nor a tree ensemble"},
		{"no inputs", `{"format":"nicc.model/v1","inputs":[],"layers":[]}`, "0 inputs"},
		{"trailing", `{"format":"nicc.model/v1","inputs":["x"],"ensemble":{"base":0,"transform":"identity","trees":[{"nodes":[{"leaf":1}]}]}} {}`, "trailing data"},
		// A closing brace or bracket after the value (json.Decoder.More did not see them).
		{"trailing brace", `{"format":"nicc.model/v1","inputs":["x"],"ensemble":{"base":0,"transform":"identity","trees":[{"nodes":[{"leaf":1}]}]}}}`, "trailing data"},
		{"trailing bracket", `{"format":"nicc.model/v1","inputs":["x"],"ensemble":{"base":0,"transform":"identity","trees":[{"nodes":[{"leaf":1}]}]}} ]`, "trailing data"},
		{"shape rows", dense(`{"op":"dense","in":2,"out":2,"w":[[1,2]],"act":"relu"}`), "layer 0 (dense): w has 1 rows, want 2"},
		{"shape cols", dense(`{"op":"dense","in":2,"out":1,"w":[[1,2,3]],"act":"relu"}`), "w row 0 has 3 columns, want 2"},
		{"in mismatch", dense(`{"op":"dense","in":3,"out":1,"w":[[1,2,3]],"act":"relu"}`), "in is 3, but the previous stage gives 2"},
		{"bias length", dense(`{"op":"dense","in":2,"out":1,"w":[[1,2]],"b":[1,2],"act":"relu"}`), "b has 2 entries, want 1"},
		{"bad activation", dense(`{"op":"dense","in":2,"out":1,"w":[[1,2]],"act":"gelu"}`), `unknown activation "gelu"`},
		{"clip interval", dense(`{"op":"dense","in":2,"out":1,"w":[[1,2]],"act":"clip","lo":1,"hi":0}`), "not an interval"},
		{"huge weight", dense(`{"op":"dense","in":2,"out":1,"w":[[1e999,2]],"act":"relu"}`), "cannot unmarshal"},
		{"dangling child", tree(`{"feature":0,"threshold":1,"cmp":"<","left":1,"right":7},{"leaf":1}`), "tree 0: node 0: child 7 is dangling"},
		{"cycle", tree(`{"feature":0,"threshold":1,"cmp":"<","left":1,"right":2},{"leaf":1},{"feature":0,"threshold":1,"cmp":"<","left":2,"right":1}`), "reached twice"},
		{"root as child", tree(`{"feature":0,"threshold":1,"cmp":"<","left":0,"right":1},{"leaf":1}`), "child 0 is dangling"},
		{"orphan", tree(`{"leaf":1},{"leaf":2}`), "node 1 is unreachable"},
		{"feature range", tree(`{"feature":3,"threshold":1,"cmp":"<","left":1,"right":2},{"leaf":1},{"leaf":2}`), "feature 3 is out of range"},
		{"bad cmp", tree(`{"feature":0,"threshold":1,"cmp":"!=","left":1,"right":2},{"leaf":1},{"leaf":2}`), `unknown comparison "!="`},
		{"half split", tree(`{"feature":0,"left":1,"right":2},{"leaf":1},{"leaf":2}`), "split node needs"},
		{"no trees", `{"format":"nicc.model/v1","inputs":["x"],"ensemble":{"base":0,"transform":"identity","trees":[]}}`, "no trees"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Unmarshal([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestValidateRejectsNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		m := mixedModels()[0]
		m.Layers[1].R[2][0] = bad
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "layer 1 (lstm): r[2][0] is") {
			t.Errorf("weight %v: error = %v", bad, err)
		}
		tr := mixedModels()[1]
		tr.Ensemble.Trees[1].Nodes[3].Value = bad
		if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "tree 1: node 3: leaf value is") {
			t.Errorf("leaf %v: error = %v", bad, err)
		}
		tr = mixedModels()[1]
		tr.Ensemble.Trees[1].Nodes[0].Threshold = bad
		if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "threshold is") {
			t.Errorf("threshold %v: error = %v", bad, err)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"empty.json": "", "bad.json": "{", "big.json": ""} {
		path := dir + "/" + name
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "big.json" { // MaxFileBytes+1 bytes, a sparse file of zeros: nothing to write
			if err := os.Truncate(path, MaxFileBytes+1); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: error = %v, want it to start with the path", name, err)
		}
	}
}
