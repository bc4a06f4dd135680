package lab

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// nicc sim gives the float teacher and a compile's firmware the same base RTT, the path's,
// when neither the model nor a flag sets it (the firmware was compiled with 0); and a
// compile's own base RTT wins over the path's for the firmware, and over the scenario for
// the teacher in diff --closed-loop.
func TestSimSameBaseRTTForTeacherAndFirmware(t *testing.T) {
	t.Parallel()
	net := netsim.Config{DurationNs: 1_000_000}
	path, err := net.BaseRTTNs()
	if err != nil {
		t.Fatal(err)
	}
	dir := compiledForSim(t, rlccXGB, false)
	teacher, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 4, Policy: teacherNN, Net: net})
	if err != nil {
		t.Fatal(err)
	}
	fw, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 4, Policy: dir, Net: net})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*SimReport{teacher, fw} {
		if r.Params.BaseRTT != path || r.Params.Sources["base_rtt_us"] != artifact.SourcePathRTT {
			t.Errorf("%s: base RTT %d ns from %q, want the path's %d", r.Decides, r.Params.BaseRTT, r.Params.Sources["base_rtt_us"], path)
		}
	}
	if teacher.Params.Sources["target"] != artifact.SourceDefault || fw.Params.Sources["target"] != artifact.SourceCompile {
		t.Errorf("sources: teacher %v, firmware %v", teacher.Params.Sources, fw.Params.Sources)
	}
	// Compiled with a base RTT of its own: the firmware's flows start with it, and the teacher
	// of diff --closed-loop gets the same.
	dir2 := t.TempDir()
	flags, src, err := flagParams(map[string]float64{"rlcc-base-rtt": 8.4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compiler.Compile(compiler.CompileOptions{Model: rlccXGB, Out: dir2, Vectors: 2000, Seed: 1, Params: flags, ParamSources: src}); err != nil {
		t.Fatal(err)
	}
	fw2, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 4, Policy: dir2, Net: net})
	if err != nil {
		t.Fatal(err)
	}
	if fw2.Params.BaseRTT != 8400 || fw2.Params.Sources["base_rtt_us"] != artifact.SourceCompile {
		t.Errorf("compiled 8.4 µs: the firmware ran under %v", fw2.Params)
	}
	var ctx nicsdk.FlowCtx
	c, _, err := simController(SimOptions{Policy: dir2, Net: net}, netsim.Scenario{}, &SimReport{})
	if err != nil {
		t.Fatal(err)
	}
	c.Init(&ctx)
	if ctx[nicsdk.CtxBaseRTT] != 8400 {
		t.Errorf("the firmware's flow starts with base RTT %d ns, want 8400", ctx[nicsdk.CtxBaseRTT])
	}
}

// nicc sim --theory sets a model file's runs beside Eq. 2 under the parameters the file
// carries, which the runs decide with: its target, not the default's.
func TestSimTheoryTakesTheModelsParams(t *testing.T) {
	t.Parallel()
	file, _ := testutil.WithRLCC(t, teacherJSON, map[string]float64{"target": 0.032})
	rep, err := SimTheory(SimOptions{Policy: file, Net: netsim.Config{DurationNs: 1_000_000}}, []int{4})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Target-0.032) > 1e-4 || len(rep.Points) != 1 || math.Abs(rep.Points[0].Theory-(rep.Target*2+rep.Beta)) > 1e-12 {
		t.Errorf("--theory of a model carrying target 0.032: target %v, points %+v", rep.Target, rep.Points)
	}
}
