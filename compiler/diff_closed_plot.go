package compiler

import (
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nicc-dev/nicc/netsim"
)

// ClosedLoopPlotBase is the closed-loop figure's file name without its extension.
const ClosedLoopPlotBase = "diff_closed_loop"

// plotClosedLoop draws one panel a figure (SU, FR, mean and p99 queue latency, drops,
// goodput), the teacher's bar beside the compile's for every scenario.
func plotClosedLoop(r *ClosedLoopReport, dir string) ([]string, error) {
	if err := outDir(dir); err != nil {
		return nil, err
	}
	metrics := []struct {
		name string
		get  func(*netsim.Result) float64
	}{
		{"SU (%)", func(x *netsim.Result) float64 { return x.Utilization }},
		{"FR (min/max × 100)", func(x *netsim.Result) float64 { return x.Fairness }},
		{"normalised goodput", func(x *netsim.Result) float64 { return x.Goodput }},
		{"QL mean (µs)", func(x *netsim.Result) float64 { return x.QueueMeanUs }},
		{"QL p99 (µs)", func(x *netsim.Result) float64 { return x.QueueP99Us }},
		{"DR (Gb/s)", func(x *netsim.Result) float64 { return x.DropGbps }},
	}
	names := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		names[i] = fmt.Sprintf("%s %d", row.Scenario, row.Flows)
	}
	teacherColour, compiledColour := color.RGBA{R: 70, G: 110, B: 190, A: 255}, color.RGBA{R: 220, G: 120, B: 40, A: 255}
	var tiles [][]*plot.Plot
	for k, m := range metrics {
		p := plot.New()
		p.Title.Text = m.name
		t, c := make(plotter.Values, len(r.Rows)), make(plotter.Values, len(r.Rows))
		top := 0.0
		for i, row := range r.Rows {
			t[i], c[i] = m.get(row.Teacher), m.get(row.Compiled)
			top = max(top, t[i], c[i])
		}
		// Bars start at 0, and the top leaves room for the legend.
		p.Y.Min, p.Y.Max = 0, max(1.3*top, 1e-3)
		w := vg.Points(14)
		tb, err := plotter.NewBarChart(t, w)
		if err != nil {
			return nil, err
		}
		cb, err := plotter.NewBarChart(c, w)
		if err != nil {
			return nil, err
		}
		tb.Color, tb.Offset = teacherColour, -w/2
		cb.Color, cb.Offset = compiledColour, w/2
		tb.LineStyle.Width, cb.LineStyle.Width = 0, 0
		p.Add(plotter.NewGrid(), tb, cb)
		p.NominalX(names...)
		p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = 0.6, draw.XRight, draw.YCenter
		if k == 0 {
			p.Legend.Add("teacher", tb)
			p.Legend.Add("compiled", cb)
			p.Legend.Top, p.Legend.Left = true, true
		}
		if k%3 == 0 {
			tiles = append(tiles, nil)
		}
		tiles[len(tiles)-1] = append(tiles[len(tiles)-1], p)
	}
	title := fmt.Sprintf("closed loop: %s (teacher) against %s", filepath.Base(r.Teacher), filepath.Base(r.Against))
	return saveFigure(vg.Points(1100), vg.Points(680), filepath.Join(dir, ClosedLoopPlotBase), func(c draw.Canvas) {
		head, rest := cutTop(c, vg.Points(22))
		drawLines(head, vg.Points(12), true, title)
		drawTiles(rest, tiles)
	})
}
