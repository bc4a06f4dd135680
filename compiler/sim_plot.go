package compiler

import (
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SimPlotBase is the name, without extension, of nicc sim --plot's figure.
const SimPlotBase = "sim_rates_queue"

// simTraceNs is how often --plot samples the run: 500 samples over it, at least 1 µs apart.
func simTraceNs(durationNs int64) int64 { return max(durationNs/500, 1000) }

// plotSim draws the run's trace into dir: each traced flow's rate over time above, the
// deepest receiver queue below, the measurement window shaded in both. It returns the files.
func plotSim(r *SimReport, dir string) ([]string, error) {
	tr := r.Trace
	if tr == nil || len(tr.TimesUs) == 0 {
		return nil, fmt.Errorf("internal error: no trace to plot")
	}
	if err := outDir(dir); err != nil {
		return nil, err
	}
	rates := plot.New()
	rates.Title.Text = fmt.Sprintf("%s, %s: the rate of each of the first %d flows", r.Scenario, r.Controller, len(tr.Flows))
	rates.X.Label.Text = "time (µs)"
	rates.Y.Label.Text = "rate set by CC (Gb/s)"
	rates.Add(plotter.NewGrid())
	// The legend names every traced flow (at most 16), in a column beside the plot where it
	// hides no line; the flows beyond the trace are counted. It listed 8 of 16.
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(9)
	for k, flow := range tr.Flows {
		xy := make(plotter.XYs, len(tr.TimesUs))
		for i, t := range tr.TimesUs {
			xy[i] = plotter.XY{X: t, Y: tr.FlowGbps[k][i]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = flowColour(k)
		l.Width = vg.Points(1)
		if k >= len(flowPalette) {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)} // the palette's second round
		}
		rates.Add(l)
		legend.Add(fmt.Sprintf("flow %d", flow), l)
	}
	if more := r.Flows - len(tr.Flows); r.Result != nil && more > 0 {
		legend.Add(fmt.Sprintf("+%d not drawn", more))
	}
	queue := plot.New()
	queue.Title.Text = "the deepest receiver queue at the switch"
	queue.X.Label.Text = "time (µs)"
	queue.Y.Label.Text = "queue (KB)"
	queue.Add(plotter.NewGrid())
	xy := make(plotter.XYs, len(tr.TimesUs))
	for i, t := range tr.TimesUs {
		xy[i] = plotter.XY{X: t, Y: tr.QueueKB[i]}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color = color.RGBA{R: 30, G: 60, B: 160, A: 255}
	queue.Add(l)
	window := draw.LineStyle{Color: color.RGBA{R: 20, G: 90, B: 30, A: 255}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	marks := vLines{{x: r.WindowStartUs, label: "measurement window →", style: window}}
	if d := r.DOCA; d != nil && d.SetAtNs > 0 {
		set := draw.LineStyle{Color: color.RGBA{R: 170, G: 30, B: 30, A: 255}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
		marks = append(marks, vLine{x: float64(d.SetAtNs) / 1000, label: "parameters set →", style: set})
	}
	for _, p := range []*plot.Plot{rates, queue} {
		p.Add(marks)
	}
	return saveFigure(vg.Points(900), vg.Points(640), filepath.Join(dir, SimPlotBase), func(c draw.Canvas) {
		side := c
		c.Max.X -= vg.Points(90)
		side.Min.X = c.Max.X
		side.Max.Y -= vg.Points(20)
		legend.Draw(side)
		drawTiles(c, [][]*plot.Plot{{rates}, {queue}})
	})
}

// flowColour is a distinct colour for the k-th flow of a plot.
func flowColour(k int) color.Color {
	return flowPalette[k%len(flowPalette)]
}

// flowPalette are the flows' colours; a plot's flows past it are dashed.
var flowPalette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}}
