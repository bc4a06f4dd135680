package plot

import (
	"cmp"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bars are panels of bars, the teacher's beside the compile's for every scenario, three
// panels a row. Left and Right name the pair in the legend ("" is "teacher", "compiled").
type Bars struct {
	Title       string
	Names       []string // the scenarios, one bar pair each
	Panels      []BarPanel
	Left, Right string
}

// BarPanel is one metric's bars: its name, the teacher's and the compile's values per scenario.
type BarPanel struct {
	Name              string
	Teacher, Compiled []float64
}

// ClosedLoop draws the closed-loop figure: one panel a metric, the teacher's bar beside the
// compile's for every scenario.
func ClosedLoop(b Bars) (*Figure, error) {
	names := b.Names
	var tiles [][]*plot.Plot
	for k, m := range b.Panels {
		p := plot.New()
		p.Title.Text = m.Name
		t, c := plotter.Values(m.Teacher), plotter.Values(m.Compiled)
		top := 0.0
		for i := range t {
			top = max(top, t[i], c[i])
		}
		// Bars start at 0, and the top leaves room for the legend.
		p.Y.Min, p.Y.Max = 0, max(1.3*top, 1e-3)
		tb, cb, err := barPair(t, c, vg.Points(14))
		if err != nil {
			return nil, err
		}
		p.Add(plotter.NewGrid(), tb, cb)
		p.NominalX(names...)
		p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = 0.6, draw.XRight, draw.YCenter
		if k == 0 {
			p.Legend.Add(cmp.Or(b.Left, "teacher"), tb)
			p.Legend.Add(cmp.Or(b.Right, "compiled"), cb)
			p.Legend.Top, p.Legend.Left = true, true
		}
		if k%3 == 0 {
			tiles = append(tiles, nil)
		}
		tiles[len(tiles)-1] = append(tiles[len(tiles)-1], p)
	}
	return saveFigure(vg.Points(1100), vg.Points(680), func(c draw.Canvas) {
		head, rest := cutTop(c, vg.Points(22))
		drawLines(head, vg.Points(12), true, b.Title)
		drawTiles(rest, tiles)
	})
}

// barPair is two bar series side by side at each name, w wide each: the left blue, the right
// orange, without outlines.
func barPair(left, right plotter.Values, w vg.Length) (*plotter.BarChart, *plotter.BarChart, error) {
	l, err := plotter.NewBarChart(left, w)
	if err != nil {
		return nil, nil, err
	}
	r, err := plotter.NewBarChart(right, w)
	if err != nil {
		return nil, nil, err
	}
	l.Color, l.Offset = color.RGBA{R: 70, G: 110, B: 190, A: 255}, -w/2
	r.Color, r.Offset = color.RGBA{R: 220, G: 120, B: 40, A: 255}, w/2
	l.LineStyle.Width, r.LineStyle.Width = 0, 0
	return l, r, nil
}
