package plot

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Curve is a training's reward curve: mean |δ| over each step's decisions (MeanAbs), and
// over the later half of them (SteadyAbs).
type Curve struct {
	Steps              []int
	MeanAbs, SteadyAbs []float64
}

// TrainCurve draws the reward curve: mean |δ| over each step's
// decisions, and over the later half of them, on a log scale. Every rollout starts with its
// flows at line rate, and that burst's |δ| dominates the whole-rollout mean, which a linear
// scale shows flat after the first steps whatever the policy learns; the later half is where
// the policy holds the queue, and the log scale shows it move by factors.
func TrainCurve(curve Curve) (*Figure, error) {
	p := plot.New()
	p.Title.Text = "ADPG reward curve: |δ| = |target − max(RTT-inflation − β, 0)·√rate|, 0 at the target"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "mean |δ| (log scale)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks125{}
	p.Add(plotter.NewGrid())
	abs, steady := make(plotter.XYs, len(curve.Steps)), make(plotter.XYs, len(curve.Steps))
	// A log scale cannot show 0: |δ| that small is drawn at the floor.
	const floor = 1e-6
	for i, step := range curve.Steps {
		abs[i] = plotter.XY{X: float64(step), Y: max(curve.MeanAbs[i], floor)}
		steady[i] = plotter.XY{X: float64(step), Y: max(curve.SteadyAbs[i], floor)}
	}
	for _, l := range []struct {
		xy    plotter.XYs
		name  string
		color color.RGBA
	}{{abs, "whole rollout (the start's burst dominates)", color.RGBA{R: 200, G: 30, B: 30, A: 255}},
		{steady, "later half of each rollout (the policy holding the queue)", color.RGBA{R: 30, G: 60, B: 160, A: 255}}} {
		ln, err := plotter.NewLine(l.xy)
		if err != nil {
			return nil, err
		}
		ln.Color = l.color
		p.Add(ln)
		p.Legend.Add(l.name, ln)
	}
	p.Legend.Top = true
	return saveFigure(vg.Points(720), vg.Points(420), func(c draw.Canvas) { p.Draw(c) })
}

// logTicks125 marks a log axis at 1, 2 and 5 of every decade (labelled) and the other
// integers (unlabelled): plot.LogTicks labels decades only, which leaves a curve within one
// decade without a number beside it.
type logTicks125 struct{}

func (logTicks125) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi; d *= 10 {
		for k := 1; k <= 9; k++ {
			v := float64(k) * d
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 || k == 2 || k == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
