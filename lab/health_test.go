package lab

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

const adpgJSON = "../testdata/models/rlcc_adpg.json"

// exactBaseRTT are the default RL-CC parameters with the simulated path's exact base RTT, as
// nicc sim gives a float teacher.
func exactBaseRTT(t *testing.T, net netsim.Config) golden.Params {
	t.Helper()
	p := nicsdk.DefaultParams()
	ns, err := net.BaseRTTNs()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseRTT = ns
	return p
}

// The health verdict on real runs: the trained network is healthy on many-to-one 16 and 128 at
// the defaults, and Swift at 16; at 128 Swift's flow scaling raises its target, and with it
// the queue, past twice Eq. 2; the network with its inputs in the wrong order is not healthy
// (its utilization under the floor), and the verdict's figures are the run's.
func TestSimHealth(t *testing.T) {
	t.Parallel()
	wrong := testutil.WrongOrderModel(t, adpgJSON)
	net := netsim.Config{DurationNs: 30_000_000, Seed: 1, ClockPPM: netsim.StandardClockPPM}
	for _, c := range []struct {
		policy  string
		flows   int
		healthy bool
		why     string // why not
	}{{adpgJSON, 16, true, ""}, {adpgJSON, 128, true, ""}, {"swift", 16, true, ""}, {"swift", 128, false, "queue: "}, {wrong, 16, false, "SU "}, {wrong, 128, false, "SU "}} {
		r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: c.flows, Policy: c.policy, Params: exactBaseRTT(t, net), Net: net})
		if err != nil {
			t.Fatal(err)
		}
		h := r.Health
		t.Logf("%s %d: %s", filepath.Base(c.policy), c.flows, h.text())
		if h.Healthy != c.healthy || (h.Why == "") != c.healthy {
			t.Errorf("%s at %d flows: healthy %v (%s), want %v", c.policy, c.flows, h.Healthy, h.Why, c.healthy)
		}
		if want := 0.064*math.Sqrt(float64(c.flows)) + 1.5; math.Abs(h.Eq2-want) > 1e-4 || h.RTTInflation != r.RTTInflation || h.SU != r.Utilization || h.DropGbps != r.DropGbps {
			t.Errorf("%s at %d flows: health figures %+v, Eq. 2 want %v", c.policy, c.flows, h, want)
		}
		if !c.healthy && !strings.Contains(h.Why, c.why) {
			t.Errorf("%s at %d flows: %s, want %q", c.policy, c.flows, h.Why, c.why)
		}
		var text strings.Builder
		if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "health     "+map[bool]string{true: "ok: ", false: "FAIL: "}[c.healthy]) {
			t.Errorf("text: %v\n%s", err, text.String())
		}
		var ce *budget.CheckError
		if err := r.HealthErr(); (err == nil) != c.healthy || !c.healthy && !errors.As(err, &ce) {
			t.Errorf("%s at %d flows: HealthErr %v", c.policy, c.flows, err)
		}
	}
	// The limits are the caller's: a floor of 100% fails the healthy run, and a limit that
	// cannot be met or failed is refused before the run.
	strict := DefaultHealth
	strict.MinSU = 100
	r, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 16, Policy: "swift", Net: net, Health: &strict})
	if err != nil || r.Health.Healthy || !strings.Contains(r.Health.Why, "< 100%") {
		t.Errorf("--min-su 100: %v, %+v", err, r.Health)
	}
	for _, bad := range []HealthLimits{{MaxDropGbps: -1, MaxEq2Ratio: 2}, {MaxEq2Ratio: 0}, {MaxEq2Ratio: math.Inf(1)}, {MaxEq2Ratio: 2, MinSU: 101}} {
		if _, err := Sim(SimOptions{Scenario: "many-to-one", Flows: 16, Policy: "swift", Net: net, Health: &bad}); err == nil {
			t.Errorf("limits %+v: no error", bad)
		}
	}
}

// The case: the wrong-order network compiled, and diff --closed-loop at 512 flows,
// where teacher and firmware drop the same terabits. The differences are within every
// tolerance (the old verdict was pass); now the scenario fails, saying the teacher does not
// control congestion, and the check error names it.
func TestDiffClosedLoopUnhealthyTeacher(t *testing.T) {
	t.Parallel()
	wrong := testutil.WrongOrderModel(t, adpgJSON)
	dir := compiledForSim(t, wrong, true)
	runs := []ClosedLoopRun{{"many-to-one", 512}}
	r, err := DiffClosedLoop(ClosedLoopOptions{Teacher: wrong, Against: dir, Golden: true, Runs: runs, Net: netsim.Config{DurationNs: 10_000_000, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	row := r.Rows[0]
	t.Logf("teacher %s; compiled %s", row.TeacherHealth.text(), row.CompiledHealth.text())
	if row.Teacher.DropGbps < 1000 || math.Abs(row.GoodputDiff) > r.MaxGoodputDiff {
		t.Fatalf("teacher drops %v Gb/s, goodput diff %v: not the issue's case", row.Teacher.DropGbps, row.GoodputDiff)
	}
	if row.Pass || r.Pass || row.TeacherHealth.Healthy || !strings.Contains(row.Why, "the teacher does not control congestion here (drops ") ||
		!strings.Contains(row.Why, "the comparison says nothing") {
		t.Errorf("row: pass %v, why %q", row.Pass, row.Why)
	}
	var ce *budget.CheckError
	if err := r.CheckErr(); !errors.As(err, &ce) || !strings.Contains(err.Error(), "the teacher does not control congestion in many-to-one:512") {
		t.Errorf("check error %v", err)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "FAIL      many-to-one:512: the teacher does not control congestion here") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "sanity probe") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// Past the flows the min rate allows, the verdict says no RL-CC policy avoids drops.
func TestHealthMinRateNote(t *testing.T) {
	res := &netsim.Result{Flows: 2048, ReceiverPorts: 1, DropGbps: 100, RTTInflation: 90, Utilization: 100}
	h := judgeHealth(res, nicsdk.DefaultParams(), true, DefaultHealth)
	if h.Healthy || !strings.Contains(h.MinRateNote, "2048 flows at the min rate 0.001") || !strings.Contains(h.failText(), "no RL-CC policy avoids drops") {
		t.Errorf("%+v", h)
	}
	if h := judgeHealth(res, nicsdk.DefaultParams(), false, DefaultHealth); h.MinRateNote != "" {
		t.Errorf("Swift got the RL-CC min-rate note: %q", h.MinRateNote)
	}
}
