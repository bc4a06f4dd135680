package plot

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Theory is nicc sim --theory's figure: the measured mean RTT inflation and the NIC paper's
// Eq. 2 against the flow count.
type Theory struct {
	Title                string
	Flows, Measured, Eq2 []float64
}

// TheoryFigure draws t on a log axis of flows.
func TheoryFigure(t Theory) (*Figure, error) {
	p := plot.New()
	p.Title.Text = t.Title
	p.X.Label.Text = "flows N (many-to-one)"
	p.Y.Label.Text = "mean RTT ÷ base RTT"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	meas, theory := make(plotter.XYs, len(t.Flows)), make(plotter.XYs, len(t.Flows))
	for i, n := range t.Flows {
		meas[i] = plotter.XY{X: n, Y: t.Measured[i]}
		theory[i] = plotter.XY{X: n, Y: t.Eq2[i]}
	}
	th, err := plotter.NewLine(theory)
	if err != nil {
		return nil, err
	}
	th.Color, th.Dashes = color.RGBA{R: 20, G: 90, B: 30, A: 255}, []vg.Length{vg.Points(6), vg.Points(3)}
	ml, mp, err := plotter.NewLinePoints(meas)
	if err != nil {
		return nil, err
	}
	ml.Color, mp.Color, mp.Shape = color.RGBA{R: 200, G: 30, B: 30, A: 255}, color.RGBA{R: 200, G: 30, B: 30, A: 255}, draw.CircleGlyph{}
	p.Add(th, ml, mp)
	p.Legend.Add("target·√N + β", th)
	p.Legend.Add("measured", ml, mp)
	p.Legend.Top, p.Legend.Left = true, true
	return saveFigure(vg.Points(640), vg.Points(420), func(c draw.Canvas) { p.Draw(c) })
}
