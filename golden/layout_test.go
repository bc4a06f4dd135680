package golden

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
)

// The authors' oldest-first export, loaded with its layout, is rlcc_adpg's network in the
// policy's order: the same y on the same states, to float rounding (the sums run in another
// order); loaded by position it is not.
func TestLoadPolicyPutsAuthorsInPolicyOrder(t *testing.T) {
	ref, _, err := LoadModel("../testdata/models/rlcc_adpg.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []InputsSpec{{Names: "a_prev2,o_prev,a_prev,o"}, {Names: "authors"}, {Names: "AUTHORS", History: 2, Features: "action, adpg_reward"}} {
		names, err := ParseInputs(spec)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := LoadPolicy("../testdata/models/rlcc_authors.onnx", nil, names, artifact.HandlerAuto, "")
		if err != nil {
			t.Fatal(err)
		}
		if lp.Handler != artifact.HandlerRLCC || !reflect.DeepEqual(lp.Model.Inputs, ref.Inputs) || !reflect.DeepEqual(lp.Layout.Permutation, []int{2, 3, 0, 1}) {
			t.Fatalf("%+v: handler %v, inputs %q, layout %+v", spec, lp.Handler, lp.Model.Inputs, lp.Layout)
		}
		byPos, err := LoadPolicy("../testdata/models/rlcc_authors.onnx", nil, nil, artifact.HandlerRLCC, "")
		if err != nil || !byPos.Layout.ByPosition {
			t.Fatalf("by position: %+v, %v", byPos, err)
		}
		r := rand.New(rand.NewPCG(5, 6))
		worst, wrong := 0.0, 0.0
		for range 2000 {
			x := []float64{0.8 + 0.4*r.Float64(), -1 + 80*r.Float64(), 0.8 + 0.4*r.Float64(), -1 + 80*r.Float64()}
			want := ref.Eval(nil, x)[0]
			worst = math.Max(worst, math.Abs(lp.Model.Eval(nil, x)[0]-want))
			wrong = math.Max(wrong, math.Abs(byPos.Model.Eval(nil, x)[0]-want))
		}
		if worst > 1e-12 || wrong < 0.5 {
			t.Errorf("%+v: max |dy| %g in the policy's order (want <= 1e-12), %g by position (want a real difference)", spec, worst, wrong)
		}
	}
}

func TestParseInputsGenerators(t *testing.T) {
	for _, c := range []struct {
		spec InputsSpec
		want []string
	}{
		{InputsSpec{}, nil},
		{InputsSpec{Names: "nicc"}, []string{"a_prev", "o", "a_prev2", "o_prev"}},
		{InputsSpec{Names: "nicc", History: 1, Features: "rtt_inflation,action"}, []string{"a_prev", "infl"}},
		{InputsSpec{Names: "authors", History: 3, Features: "cur_rate,adpg_reward"}, []string{"cur_rate_prev2", "adpg_reward_prev2", "cur_rate_prev", "adpg_reward_prev", "cur_rate", "adpg_reward"}},
		{InputsSpec{Names: " x, y "}, []string{"x", "y"}},
	} {
		got, err := ParseInputs(c.spec)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseInputs(%+v) = %q, %v; want %q", c.spec, got, err, c.want)
		}
	}
	for _, c := range []struct {
		spec InputsSpec
		msg  string
	}{
		{InputsSpec{Names: "authors", History: 12}, "--history 12: want 1 to 11 states"},
		{InputsSpec{Names: "authors", History: -1}, "--history -1"},
		{InputsSpec{Names: "nicc", Features: "action,latency"}, `feature "latency" is not one the handler feeds`},
		{InputsSpec{Names: "a,b", Features: "action"}, "--history and --features shape"},
		{InputsSpec{Names: "a,,b"}, "name 2 is empty"},
		{InputsSpec{Names: "a,b,a"}, `"a" is named twice`},
	} {
		if _, err := ParseInputs(c.spec); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseInputs(%+v) = %v, want %q", c.spec, err, c.msg)
		}
	}
}
