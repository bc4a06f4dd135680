package lab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/distill"
)

// A sweep lists the configurations the fit stage refuses, builds the others, and keeps the
// refused ones off the front. On ibex (100 MHz) 2 µs is 200 cycles: 64 trees of depth 3 need
// at least 256.
func TestSweepRefusedPoint(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds firmware")
	}
	out := t.TempDir()
	r, err := Sweep(SweepOptions{DistillOptions: smallDistill(), Trees: SweepRange{4, 64, 60}, Depth: SweepRange{3, 3, 1}, Out: out, Core: "ibex", Vectors: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 2 {
		t.Fatalf("points %+v", r.Points)
	}
	built, refused := r.Points[0], r.Points[1]
	if built.Refused != "" || built.WCETCycles == 0 || built.Verified < 500 {
		t.Errorf("4×3: %+v", built)
	}
	if !strings.Contains(refused.Refused, "needs at least 256 cycles") || refused.WCETCycles != 0 || refused.Fits || refused.Pareto {
		t.Errorf("64×3: %+v", refused)
	}
	if !slices.Equal(r.Front, []int{0}) {
		t.Errorf("front %v", r.Front)
	}
	if _, err := os.Stat(filepath.Join(out, "trees64_depth3", artifact.FirmwareFile)); err == nil {
		t.Error("the refused configuration was built")
	}
	var txt strings.Builder
	if err := r.WriteText(&txt); err != nil || !strings.Contains(txt.String(), "refused before building") {
		t.Errorf("text:\n%s", txt.String())
	}
}

func TestParseSweep(t *testing.T) {
	tr, de, err := ParseSweep("trees=4..20,depth=2..6", 10, 4)
	if err != nil || !reflect.DeepEqual(tr.Values(), []int{4, 8, 12, 16, 20}) || !reflect.DeepEqual(de.Values(), []int{2, 3, 4, 5, 6}) {
		t.Errorf("%v %v %v", tr.Values(), de.Values(), err)
	}
	tr, de, err = ParseSweep("trees=3..10:3", 10, 4)
	if err != nil || !reflect.DeepEqual(tr.Values(), []int{3, 6, 9, 10}) || !reflect.DeepEqual(de.Values(), []int{4}) {
		t.Errorf("%v %v %v", tr.Values(), de.Values(), err)
	}
	for _, bad := range []string{"", "trees", "trees=0..4", "trees=5..4", "depth=1..99", "leaves=1..2", "trees=1..2:0", "trees=1,trees=2", "trees=a..b"} {
		if _, _, err := ParseSweep(bad, 10, 4); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParetoFront(t *testing.T) {
	pt := func(w uint64, rmse float64) SweepPoint {
		return SweepPoint{WCETCycles: w, HeldOut: distill.Fit{RMSE: rmse}}
	}
	pts := []SweepPoint{pt(300, 0.05), pt(200, 0.10), pt(250, 0.12), pt(200, 0.09), pt(400, 0.05), pt(500, 0.01)}
	if got, want := ParetoFront(pts), []int{3, 0, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("front %v, want %v", got, want)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds firmware")
	}
	out := t.TempDir()
	o := smallDistill()
	r, err := Sweep(SweepOptions{DistillOptions: o, Trees: SweepRange{2, 4, 2}, Depth: SweepRange{2, 3, 1}, Out: out, Vectors: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 4 || len(r.Front) == 0 || r.Entry != artifact.EntryHandler {
		t.Fatalf("report %+v", r)
	}
	for _, p := range r.Points {
		if p.Mismatches != 0 || p.Verified < 500 || p.WCETCycles == 0 || p.PolicyWCET == 0 || p.PolicyWCET >= p.WCETCycles {
			t.Errorf("point %+v", p)
		}
	}
	// The budget in cycles of the default core (2 µs at 1.8 GHz, 1 thread) decides Fits.
	if r.BudgetCycles != 3600 || r.BudgetMicros != 2 || r.ClockHz != 1.8e9 || r.ThreadsSharing != 1 {
		t.Errorf("budget %v cycles, %v µs, %v Hz, %d threads", r.BudgetCycles, r.BudgetMicros, r.ClockHz, r.ThreadsSharing)
	}
	for _, p := range r.Points {
		if p.Fits != (float64(p.WCETCycles) <= r.BudgetCycles) {
			t.Errorf("%d cycles: fits %v against %v budget cycles", p.WCETCycles, p.Fits, r.BudgetCycles)
		}
	}
	// More trees cost more cycles at the same depth.
	if r.Points[0].WCETCycles >= r.Points[1].WCETCycles {
		t.Errorf("2×2 %d cycles, 4×2 %d", r.Points[0].WCETCycles, r.Points[1].WCETCycles)
	}
	for _, f := range []string{"sweep.json", "sweep.png", "sweep.svg", "trees2_depth2/student.json", "trees4_depth3/firmware.elf"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var back SweepReport
	b, _ := os.ReadFile(filepath.Join(out, "sweep.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Points) != 4 || !reflect.DeepEqual(back.Front, r.Front) {
		t.Errorf("sweep.json: %v", err)
	}
	var txt strings.Builder
	if err := r.WriteText(&txt); err != nil || !strings.Contains(txt.String(), "Pareto front (held-out RMSE vs WCET cycles):") {
		t.Errorf("text:\n%s", txt.String())
	}
}
