package compiler

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/student"
)

// The parameters a file carries come back from both formats; a flag overrides the model's,
// the rest are the defaults, and each says where it came from.
func TestParamsFromModelFlagDefault(t *testing.T) {
	t.Parallel()
	jp, op := testutil.WithRLCC(t, teacherJSON, map[string]float64{"target": 0.032, "scale": 12.5, "base_rtt_us": 8.4})
	flags, src, err := flagParams(map[string]float64{"rlcc-scale": 6, "rlcc-beta": 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{jp, op} {
		m, _, err := golden.LoadModel(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, got, err := golden.ResolveParams(path, m, flags, src)
		if err != nil {
			t.Fatal(err)
		}
		target, beta, scale := rlcc.Real(p)
		if math.Abs(target-0.032) > 1.0/nicsdk.Q16One || beta != 2 || scale != 6 || p.BaseRTT != 8400 || p.MinRate != nicsdk.DefaultParams().MinRate {
			t.Errorf("%s: target %v beta %v scale %v base %d ns min rate %d", path, target, beta, scale, p.BaseRTT, p.MinRate)
		}
		want := artifact.ParamSources{"target": artifact.SourceModel, "beta": artifact.SourceFlag, "scale": artifact.SourceFlag, "min_rate": artifact.SourceDefault,
			"init_rate": artifact.SourceDefault, "base_rtt_us": artifact.SourceModel}
		if !maps.Equal(got, want) {
			t.Errorf("%s: sources %v, want %v", path, got, want)
		}
		line := artifact.NewRLCCParams(p).WithSources(got).String()
		for _, w := range []string{"target 0.032 (model)", "beta 2 (flag)", "scale 6 (flag)", "min rate 0.001 (default)", "base RTT 8.4 µs (model)"} {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q lacks %q", path, line, w)
			}
		}
	}
}

// flagParams are the parameters the CLI gives for these flags set (over the defaults).
func flagParams(set map[string]float64) (golden.Params, artifact.ParamSources, error) {
	var v []float64
	var names []string
	for _, f := range rlcc.ParamFields {
		val := f.Default
		if s, ok := set[f.Flag]; ok {
			val = s
			names = append(names, f.Flag)
		}
		v = append(v, val)
	}
	p, err := golden.NewParams(v)
	return p, golden.FlagSources(names), err
}

// A file's parameter out of the handler's range, or one nicc does not know, is one line
// naming the file and the parameter.
func TestParamsFromModelRefused(t *testing.T) {
	t.Parallel()
	jp, op := testutil.WithRLCC(t, teacherJSON, map[string]float64{"scale": 300})
	for _, path := range []string{jp, op} {
		_, err := Compile(CompileOptions{Model: path, Out: t.TempDir(), Int8: &golden.Int8Options{}})
		if err == nil || !strings.Contains(err.Error(), path+": rlcc parameter scale 300") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", path, err)
		}
	}
	m, _, err := golden.LoadModel(teacherJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.RLCC = map[string]float64{"hidden": 12}
	if _, err := model.Marshal(m); err == nil || !strings.Contains(err.Error(), `rlcc parameter "hidden"`) {
		t.Errorf("unknown key: %v", err)
	}
}

// Every parameter a flag sets has its key in the policy file's form.
func TestParamKeysAreModelKeys(t *testing.T) {
	var keys []string
	for _, f := range rlcc.ParamFields {
		keys = append(keys, f.Key)
	}
	if !slices.Equal(keys, model.RLCCKeys) {
		t.Errorf("rlcc keys %v, model keys %v", keys, model.RLCCKeys)
	}
}

// compile --target trees: the report gives the trees' fidelity against the network teacher
// (the distillation's held-out figures), labelled apart from the firmware's against the
// trees, and the parameters the distillation ran under (the teacher file's).
func TestCompileTreesFidelityAgainstNetwork(t *testing.T) {
	t.Parallel()
	jp, _ := testutil.WithRLCC(t, teacherJSON, map[string]float64{"scale": 12.5})
	d, err := student.Distill(student.DistillOptions{Teacher: jp, Samples: 4000, HeldOut: 0.25, Seed: 3,
		Train: distill.Options{Trees: 4, Depth: 3, LearningRate: 1, L2: 1}}, "")
	if err != nil {
		t.Fatal(err)
	}
	opt := CompileOptions{Out: t.TempDir(), Vectors: 2000, Seed: 1}
	opt.UseStudent(d)
	r, err := Compile(opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Teacher == nil || r.Teacher.Teacher != jp || r.Teacher.HeldOut != d.HeldOut || r.Teacher.HeldOut.Rows == 0 {
		t.Fatalf("fidelity against the network: %+v, distill held-out %+v", r.Teacher, d.HeldOut)
	}
	if _, _, scale := rlcc.Real(r.FixedParams()); scale != 12.5 || r.Params.Sources["scale"] != artifact.SourceModel {
		t.Errorf("compiled under scale %v from %q, want the teacher file's 12.5", scale, r.Params.Sources["scale"])
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"vs network  the trees against the network teacher " + jp, "fidelity    vs the trees: "} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
	back, err := artifact.ReadReport(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Teacher == nil || back.Teacher.HeldOut != d.HeldOut {
		t.Errorf("report.json's fidelity_teacher: %+v", back.Teacher)
	}
}
