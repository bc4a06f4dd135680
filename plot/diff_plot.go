package plot

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Grid is a value over (a_{t-1}, o_t) cells for one previous state: Xs are a_{t-1}, Ys are
// o_t in units of T, Z[row][col].
type Grid struct {
	Xs, Ys []float64
	Z      [][]float64
}

// HeatRow is one previous state's panels: the float teacher's y, the student's y, and
// Δy = student − teacher at the input the student sees.
type HeatRow struct {
	Name                 string
	Float, Student, Diff *Grid
}

// Heatmaps is nicc diff's heatmap figure: a row of panels per previous state, the colour
// bars, and notes under them.
type Heatmaps struct {
	Title   string
	Student string // the student in a few words (the panels' titles)
	Rows    []HeatRow
	Notes   []string
}

// heatFigure is what the heatmaps show for each previous state: the float teacher's y, the
// student's y and Δy = student − teacher, with their colour scales.
type heatFigure struct {
	float, student, diff []*Grid
	// The y panels share the scale [−yLim, yLim]: ±1, the range the RL-CC handler clamps y
	// to, or the smallest round bound holding every value when that is narrower (an LSTM's
	// one step from the zero state stays near 0). Values beyond ±1 are drawn in the scale's
	// under and over colours and counted.
	yLim, maxY  float64 // maxY is the largest |y| on the grid
	under, over int     // y cells (float and student panels) below −yLim, above yLim
	cells       int     // y cells in all
	// The Δy panels share [−dLim, dLim], a round bound holding every difference.
	dLim, maxDiff float64
}

// newHeatFigure works out the scales of h's grids.
func newHeatFigure(h Heatmaps) *heatFigure {
	f := &heatFigure{}
	for _, row := range h.Rows {
		for _, r := range row.Diff.Z {
			for _, v := range r {
				f.maxDiff = max(f.maxDiff, math.Abs(v))
			}
		}
		for _, g := range []*Grid{row.Float, row.Student} {
			for _, r := range g.Z {
				for _, v := range r {
					f.maxY = max(f.maxY, math.Abs(v))
				}
			}
		}
		f.float, f.student, f.diff = append(f.float, row.Float), append(f.student, row.Student), append(f.diff, row.Diff)
	}
	f.yLim = 1
	if f.maxY > 0 && f.maxY < 1 {
		f.yLim = min(1, niceCeil(f.maxY))
	}
	for _, g := range append(f.float[:len(f.float):len(f.float)], f.student...) {
		for _, row := range g.Z {
			for _, v := range row {
				f.cells++
				switch {
				case v < -f.yLim:
					f.under++
				case v > f.yLim:
					f.over++
				}
			}
		}
	}
	f.dLim = 1e-3
	if f.maxDiff > 0 {
		f.dLim = niceCeil(f.maxDiff)
	}
	return f
}

// Colours of y beyond ±1: darker than either end of the blue–red palette, so a clipped
// cell reads as "further than the scale", not as missing.
var (
	underColour = color.RGBA{R: 20, G: 35, B: 120, A: 255} // navy
	overColour  = color.RGBA{R: 115, G: 0, B: 45, A: 255}  // maroon
)

func (f *heatFigure) yScale() colourScale {
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-f.yLim)
	cm.SetMax(f.yLim)
	return colourScale{lo: -f.yLim, hi: f.yLim, pal: cm.Palette(255).Colors(), under: underColour, over: overColour}
}

func (f *heatFigure) diffScale() colourScale {
	// Green to magenta: no hue of the y panels' blue–red.
	cm := moreland.NewSmoothDiverging(color.RGBA{R: 27, G: 120, B: 55, A: 255}, color.RGBA{R: 197, G: 27, B: 125, A: 255}, 88)
	cm.SetMin(-f.dLim)
	cm.SetMax(f.dLim)
	return colourScale{lo: -f.dLim, hi: f.dLim, pal: cm.Palette(255).Colors(), under: nanColour, over: nanColour}
}

// HeatmapFigure draws h: a row per previous state (float, student, Δy), the two colour bars
// and the notes (the definitions of the axes).
func HeatmapFigure(h Heatmaps) (*Figure, error) {
	f := newHeatFigure(h)
	ys, ds := f.yScale(), f.diffScale()
	var tiles [][]*plot.Plot
	for i, p := range h.Rows {
		var row []*plot.Plot
		for k, who := range []string{"float teacher", "student: " + h.Student, "Δy = student − float teacher"} {
			pl := plot.New()
			pl.Title.Text = who + "\n" + p.Name
			pl.Title.TextStyle.Font.Size = vg.Points(10)
			pl.X.Label.Text = "previous multiplier a_{t-1} = rate_t / rate_{t-1}"
			pl.Y.Label.Text = "observation o_t (units of T)"
			pl.X.Label.TextStyle.Font.Size = vg.Points(10)
			pl.Y.Label.TextStyle.Font.Size = vg.Points(10)
			switch k {
			case 0:
				pl.Add(cells{f.float[i], ys})
			case 1:
				pl.Add(cells{f.student[i], ys})
			default:
				pl.Add(cells{f.diff[i], ds})
			}
			row = append(row, pl)
		}
		tiles = append(tiles, row)
	}

	yBar := plot.New()
	yBar.Title.Text = "policy output y (float and student panels): blue lowers the rate, red raises it, white holds it"
	switch {
	case f.under+f.over > 0:
		var beyond []string
		if f.under > 0 {
			beyond = append(beyond, fmt.Sprintf("y < −1 in navy (%d of %d cells)", f.under, f.cells))
		}
		if f.over > 0 {
			beyond = append(beyond, fmt.Sprintf("y > 1 in maroon (%d of %d cells)", f.over, f.cells))
		}
		yBar.Title.Text += "\nbeyond the scale, marked at its ends: " + strings.Join(beyond, ", ") + "; the handler clamps y to [−1, 1]"
	case f.yLim < 1:
		yBar.Title.Text += fmt.Sprintf("\nscale ±%g: every value on the grid lies within it (max |y| %.4g); the handler takes y on [−1, 1]", f.yLim, f.maxY)
	default:
		yBar.Title.Text += "\nevery value lies within [−1, 1], the range the handler clamps y to"
	}
	yBar.Add(colourBar{scale: ys, markUnder: f.under > 0, markOver: f.over > 0})
	dBar := plot.New()
	dBar.Title.Text = fmt.Sprintf("Δy = student − float teacher: green student lower, magenta higher\nmax |Δy| on the grid %.4g (scale ±%g)", f.maxDiff, f.dLim)
	dBar.Add(colourBar{scale: ds})
	yBar.X.Tick.Marker, dBar.X.Tick.Marker = barTicks(f.yLim), barTicks(f.dLim)
	for _, b := range []*plot.Plot{yBar, dBar} {
		b.HideY()
		b.Title.TextStyle.Font.Size = vg.Points(10)
	}

	return saveFigure(14*vg.Inch, 15*vg.Inch, func(c draw.Canvas) {
		head, c := cutTop(c, 0.6*vg.Inch) // two lines of the title, wrapped to the width
		drawLines(head, vg.Points(13), true, h.Title)
		foot, c := cutBottom(c, vg.Inch)
		bars, c := cutBottom(c, 1.1*vg.Inch)
		drawTiles(c, tiles)
		w := bars.Max.X - bars.Min.X
		left, right := bars, bars
		left.Max.X = bars.Min.X + 2*w/3
		right.Min.X = left.Max.X
		yBar.Draw(draw.Crop(left, 0.9*vg.Inch, -0.5*vg.Inch, 0, 0))
		dBar.Draw(draw.Crop(right, 0.5*vg.Inch, -0.3*vg.Inch, 0, 0))
		drawLines(foot, vg.Points(10), false, h.Notes...)
	})
}
