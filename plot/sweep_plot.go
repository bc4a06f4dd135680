package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sweep is a distill sweep's figure: held-out RMSE against WCET cycles.
type Sweep struct {
	Title, XLabel string
	Points        []Point // every configuration built: X its WCET cycles, Y its held-out RMSE
	Front         []Point // the Pareto front, cheapest first
	BudgetCycles  float64
	BudgetText    string // the budget line's legend entry, "budget 2 µs = 3600 cycles (...)"
}

// Point is a labelled point.
type Point struct {
	X, Y  float64
	Label string
}

// budgetAxisReach is how far past the largest WCET the cycle axis stretches to show the
// budget line. A budget further out would squeeze every point into a corner: an overview
// below, from 0 cycles, shows it instead.
const budgetAxisReach = 1.5

// sweepAxes are the sweep plot's ranges: every point with room for its label (to its right
// and above it), and the budget line when it is within budgetAxisReach of the largest WCET;
// otherwise the overview's x axis runs from 0 past the budget (overviewMax).
type sweepAxes struct {
	xmin, xmax, ymin, ymax float64
	budgetShown            bool
	overviewMax            float64 // 0 when the budget is shown on the main axes
	maxWCET                float64
}

func newSweepAxes(r Sweep) sweepAxes {
	var a sweepAxes
	var xs, ys []float64
	for _, p := range r.Points {
		xs, ys = append(xs, p.X), append(ys, p.Y)
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	a.maxWCET = hi
	if r.BudgetCycles > 0 && r.BudgetCycles <= budgetAxisReach*hi {
		a.budgetShown = true
		lo, hi = min(lo, r.BudgetCycles), max(hi, r.BudgetCycles)
	}
	if !a.budgetShown {
		a.overviewMax = 1.08 * max(r.BudgetCycles, hi)
	}
	span := max(hi-lo, 10)
	a.xmin, a.xmax = lo-0.06*span, hi+0.22*span
	lo, hi = slices.Min(ys), slices.Max(ys)
	span = max(hi-lo, 0.1*hi, 1e-9)
	a.ymin, a.ymax = lo-0.08*span, hi+0.12*span
	return a
}

// SweepFigure draws held-out RMSE against WCET cycles, every configuration built a labelled
// point, the Pareto front a line and the budget a dashed line; the legend sits below the
// axes, clear of the points. Without a point it draws nothing (nil).
func SweepFigure(r Sweep) (*Figure, error) {
	if len(r.Points) == 0 {
		return nil, nil
	}
	ax := newSweepAxes(r)
	p := plot.New()
	p.Title.Text = r.Title
	p.X.Label.Text = r.XLabel
	p.Y.Label.Text = "held-out RMSE of y vs the teacher"
	p.X.Tick.Marker = intTicks{}
	p.Add(plotter.NewGrid())

	var all plotter.XYs
	var labels []string
	for _, pt := range r.Points {
		all = append(all, plotter.XY{X: pt.X, Y: pt.Y})
		labels = append(labels, pt.Label)
	}
	sc, err := plotter.NewScatter(all)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color = color.RGBA{R: 120, G: 120, B: 120, A: 255}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: all, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(9)
	}
	lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(3)}

	front := make(plotter.XYs, len(r.Front))
	for i, pt := range r.Front {
		front[i] = plotter.XY{X: pt.X, Y: pt.Y}
	}
	ln, pts, err := plotter.NewLinePoints(front)
	if err != nil {
		return nil, err
	}
	ln.Color = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	ln.Width = vg.Points(1.5)
	pts.Color = ln.Color
	pts.Shape = draw.CircleGlyph{}

	budget := draw.LineStyle{Color: color.RGBA{R: 20, G: 90, B: 30, A: 255}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	p.Add(sc, ln, pts, lb)
	budgetText := r.BudgetText
	budgetLine := vLines{{x: r.BudgetCycles, label: fmt.Sprintf("budget %.0f cycles", math.Floor(r.BudgetCycles)), style: budget}}
	var overview *plot.Plot
	if ax.budgetShown {
		p.Add(budgetLine)
	} else {
		budgetText += fmt.Sprintf(", %.1f× the largest WCET: in the overview", r.BudgetCycles/ax.maxWCET)
		overview = plot.New()
		overview.Title.Text = "overview from 0 cycles to the budget (shaded: the range of the plot above)"
		overview.Title.TextStyle.Font.Size = vg.Points(10)
		overview.X.Label.Text = "WCET (cycles)"
		overview.Y.Label.Text = "RMSE"
		overview.X.Tick.Marker = intTicks{}
		overview.Add(xBand{ax.xmin, ax.xmax}, plotter.NewGrid(), sc, ln, pts, budgetLine)
		overview.X.Min, overview.X.Max, overview.Y.Min, overview.Y.Max = 0, ax.overviewMax, ax.ymin, ax.ymax
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = ax.xmin, ax.xmax, ax.ymin, ax.ymax

	leg := plot.NewLegend()
	leg.Left, leg.Top = true, true
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.Padding = vg.Points(3)
	leg.Add("Pareto front (no point is both cheaper and more accurate)", ln, pts)
	leg.Add("configuration (trees×depth)", sc)
	bl, err := plotter.NewLine(plotter.XYs{{}, {X: 1}})
	if err != nil {
		return nil, err
	}
	bl.LineStyle = budget
	leg.Add(budgetText, bl)

	// Sweep names the files base.png and base.svg.
	h := 5.5 * vg.Inch
	if overview != nil {
		h += 1.8 * vg.Inch
	}
	return saveFigure(9*vg.Inch, h, func(c draw.Canvas) {
		strip, c := cutBottom(c, 0.8*vg.Inch)
		leg.Draw(draw.Crop(strip, vg.Inch, 0, 0, -vg.Millimeter*2))
		if overview != nil {
			var lower draw.Canvas
			lower, c = cutBottom(c, 1.8*vg.Inch)
			overview.Draw(draw.Crop(lower, 0, -vg.Millimeter*2, 0, -vg.Millimeter*3))
		}
		p.Draw(draw.Crop(c, 0, -vg.Millimeter*2, 0, -vg.Millimeter*2))
	})
}

// xBand shades [x0, x1] across the plot's height (no DataRange: the plot's range holds it).
type xBand struct{ x0, x1 float64 }

func (b xBand) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(b.x0), c.Min.X), min(max(trX(b.x1), trX(b.x0)+vg.Points(2)), c.Max.X)
	c.FillPolygon(color.Gray{Y: 225}, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}
