package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SimTrace is a run's trace as the sim figure draws it.
type SimTrace struct {
	Scenario, Controller string
	TimesUs              []float64
	Flows                []int       // the traced flows' numbers
	FlowGbps             [][]float64 // each traced flow's rate at TimesUs
	QueueKB              []float64   // the deepest receiver queue at TimesUs
	NotDrawn             int         // the flows beyond the trace
	WindowStartUs        float64
	SetAtUs              float64 // when a DOCA program's parameters were set; 0: not during the run
}

// Sim draws the run's trace: each traced flow's rate over time above, the deepest receiver
// queue below, the measurement window marked in both.
func Sim(tr SimTrace) (*Figure, error) {
	if len(tr.TimesUs) == 0 {
		return nil, fmt.Errorf("internal error: no trace to plot")
	}
	rates := plot.New()
	rates.Title.Text = fmt.Sprintf("%s, %s: the rate of each of the first %d flows", tr.Scenario, tr.Controller, len(tr.Flows))
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
	if tr.NotDrawn > 0 {
		legend.Add(fmt.Sprintf("+%d not drawn", tr.NotDrawn))
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
	marks := vLines{{x: tr.WindowStartUs, label: "measurement window →", style: window}}
	if tr.SetAtUs > 0 {
		set := draw.LineStyle{Color: color.RGBA{R: 170, G: 30, B: 30, A: 255}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
		marks = append(marks, vLine{x: tr.SetAtUs, label: "parameters set →", style: set})
	}
	for _, p := range []*plot.Plot{rates, queue} {
		p.Add(marks)
	}
	return saveFigure(vg.Points(900), vg.Points(640), func(c draw.Canvas) {
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
