package plot

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Slowdowns are a workload's flow completion-time slowdowns by size bucket: the buckets'
// names, and per bucket the mean and the p99 (0 where no flow finished).
type Slowdowns struct {
	Title     string
	Buckets   []string
	Mean, P99 []float64
}

// FCT draws a workload's slowdown by size bucket, the mean's bar beside the p99's, a line
// at 1 (a flow as fast as alone on the empty network).
func FCT(s Slowdowns) (*Figure, error) {
	p := plot.New()
	p.Title.Text = "FCT slowdown by flow size (completion time over the flow's alone at line rate)"
	p.Y.Label.Text = "slowdown"
	top := 2.0
	for _, x := range s.P99 {
		top = max(top, x)
	}
	p.Y.Min, p.Y.Max = 0, 1.15*top
	mb, pb, err := barPair(s.Mean, s.P99, vg.Points(18))
	if err != nil {
		return nil, err
	}
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(s.Buckets)) - 0.5, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), mb, pb, one)
	p.NominalX(s.Buckets...)
	p.Legend.Add("mean", mb)
	p.Legend.Add("p99", pb)
	p.Legend.Top, p.Legend.Left = true, true
	return saveFigure(vg.Points(760), vg.Points(480), func(c draw.Canvas) {
		head, rest := cutTop(c, vg.Points(22))
		drawLines(head, vg.Points(12), true, s.Title)
		p.Draw(rest)
	})
}
