package plot

import (
	"fmt"
	"slices"
	"testing"
)

func sweepReport(budgetCycles float64, wcets ...uint64) Sweep {
	r := Sweep{Title: "distilled students of t.json (100 states): held-out RMSE vs WCET", XLabel: "WCET of nicc_on_event on dpa (cycles)",
		BudgetCycles: budgetCycles, BudgetText: "budget"}
	for i, w := range wcets {
		p := Point{X: float64(w), Y: 0.3 / float64(i+1), Label: fmt.Sprintf("%d×3", 2+2*i)}
		r.Points = append(r.Points, p)
		r.Front = append(r.Front, p) // each cheaper point is less accurate
	}
	return r
}

func TestSweepAxes(t *testing.T) {
	for _, c := range []struct {
		budget float64
		wcets  []uint64
		shown  bool
	}{
		{3600, []uint64{191, 211, 235}, false}, // 15× the largest WCET: stated in the legend
		{300, []uint64{191, 211, 235}, true},
		{200, []uint64{191, 211, 235}, true}, // points over budget
		{3600, []uint64{500}, false},         // one point
		{600, []uint64{500}, true},
	} {
		r := sweepReport(c.budget, c.wcets...)
		a := newSweepAxes(r)
		if a.budgetShown != c.shown {
			t.Errorf("budget %v, WCETs %v: shown %v, want %v", c.budget, c.wcets, a.budgetShown, c.shown)
		}
		// Every point lies inside, with room for its label on its right and above it.
		xroom, yroom := 0.1*(a.xmax-a.xmin), 0.08*(a.ymax-a.ymin)
		for _, p := range r.Points {
			x, y := p.X, p.Y
			if !(x > a.xmin && x+xroom < a.xmax && y > a.ymin && y+yroom < a.ymax) {
				t.Errorf("budget %v: point (%v, %v) outside %+v", c.budget, x, y, a)
			}
		}
		if a.budgetShown && !(c.budget > a.xmin && c.budget < a.xmax) || a.budgetShown != (a.overviewMax == 0) {
			t.Errorf("budget %v outside the x axis %v..%v (overview to %v)", c.budget, a.xmin, a.xmax, a.overviewMax)
		}
		// Off the main axes, the overview holds the budget and every point.
		if !a.budgetShown && !(c.budget < a.overviewMax && float64(slices.Max(c.wcets)) < a.overviewMax) {
			t.Errorf("budget %v, WCETs %v: overview to %v", c.budget, c.wcets, a.overviewMax)
		}
	}
}

func TestSweepPlotFiles(t *testing.T) {
	for _, budget := range []float64{230, 3600} { // on the axes (two points over), in the overview
		render := func() map[string][]byte {
			f, err := SweepFigure(sweepReport(budget, 191, 211, 235, 260))
			if err != nil {
				t.Fatal(err)
			}
			return checkFigures(t, map[string]*Figure{"sweep": f})
		}
		sameFigures(t, render(), render(), 2)
	}
	if f, err := SweepFigure(Sweep{}); f != nil || err != nil {
		t.Errorf("no point: %v, %v; want nothing drawn", f, err)
	}
}

// The reward curve's log axis labels 1, 2 and 5 of each decade, so a curve within one decade
// (the later-half |δ| of a training, 0.1 to 0.16) has numbers beside it.
func TestLogTicks125(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks125{}).Ticks(0.09, 1.1) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"0.1", "0.2", "0.5", "1"}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
}
