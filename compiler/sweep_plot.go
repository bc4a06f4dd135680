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

// plotSweep draws held-out RMSE against WCET cycles, every configuration a labelled point
// and the Pareto front a line, into r.PNG and r.SVG.
func plotSweep(r *SweepReport) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("distilled students of %s: held-out RMSE vs WCET", filepath.Base(r.Teacher))
	p.X.Label.Text = fmt.Sprintf("WCET of %s on %s (cycles)", r.Entry, r.Core)
	p.Y.Label.Text = "held-out RMSE vs teacher"
	p.Add(plotter.NewGrid())

	var all plotter.XYs
	var labels []string
	for _, pt := range r.Points {
		if pt.Refused != "" {
			continue // not built: no WCET
		}
		all = append(all, plotter.XY{X: float64(pt.WCETCycles), Y: pt.HeldOut.RMSE})
		labels = append(labels, fmt.Sprintf("%d×%d", pt.Trees, pt.Depth))
	}
	if len(all) == 0 {
		return savePlot(p, r)
	}
	sc, err := plotter.NewScatter(all)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = color.RGBA{R: 120, G: 120, B: 120, A: 255}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	p.Add(sc)
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: all, Labels: labels})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(7)
	}
	lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
	p.Add(lb)

	front := make(plotter.XYs, len(r.Front))
	for i, j := range r.Front {
		front[i] = plotter.XY{X: float64(r.Points[j].WCETCycles), Y: r.Points[j].HeldOut.RMSE}
	}
	ln, pts, err := plotter.NewLinePoints(front)
	if err != nil {
		return err
	}
	ln.Color = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	ln.Width = vg.Points(1.5)
	pts.Color = ln.Color
	pts.Shape = draw.CircleGlyph{}
	p.Add(ln, pts)
	p.Legend.Add("Pareto front", ln, pts)
	p.Legend.Add("configuration (trees×depth)", sc)
	p.Legend.Top = true
	return savePlot(p, r)
}

// savePlot writes p into r.PNG and r.SVG.
func savePlot(p *plot.Plot, r *SweepReport) error {
	for _, f := range []string{r.PNG, r.SVG} {
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, f); err != nil {
			return err
		}
	}
	return nil
}
