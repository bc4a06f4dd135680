package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// histBins is how many bins each histogram of Δy has.
const histBins = 80

// Histograms are an open-loop diff's Δy = student − teacher per row, and the marks on |Δy|
// (its percentiles and maximum, the statistics' own values).
type Histograms struct {
	Student string // the student in a few words
	Rows    int    // the rows compared
	DY      []float64
	Marks   []Mark
}

// Mark is a named value on an axis.
type Mark struct {
	Name  string
	Value float64
}

// percentileLines mark |Δy|'s percentiles and maximum.
func percentileLines(marks []Mark) vLines {
	red := draw.LineStyle{Color: color.RGBA{R: 190, G: 20, B: 20, A: 255}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	var ls vLines
	for _, p := range marks {
		ls = append(ls, vLine{x: p.Value, label: fmt.Sprintf("%s %.4g", p.Name, p.Value), style: red})
	}
	return ls
}

// histWidth is the histograms' figure width.
const histWidth = 8 * vg.Inch

// HistogramFigure draws Δy signed (does the student lean one way?) and |Δy| with its
// percentiles marked, both with a log count axis so that the rare large errors show.
func HistogramFigure(r Histograms) (*Figure, error) {
	m := 0.0
	abs := make([]float64, len(r.DY))
	for i, v := range r.DY {
		abs[i] = math.Abs(v)
		m = max(m, abs[i])
	}
	signed := plot.New()
	signed.Title.Text = fmt.Sprintf("Δy = student − float teacher over %d rows (student: %s)", r.Rows, r.Student)
	signed.X.Label.Text = "Δy (policy output y)"
	grey := draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(0.8)}
	logHist(signed, histogram(r.DY, histBins, -m, m), vLines{{x: 0, label: "0", style: grey}})

	abso := plot.New()
	abso.Title.Text = "|Δy| with its percentiles over the rows (as printed)"
	abso.X.Label.Text = "|Δy| (policy output y)"
	logHist(abso, histogram(abs, histBins, 0, m), percentileLines(r.Marks))
	for _, p := range []*plot.Plot{signed, abso} {
		wrapTitle(p, histWidth-vg.Inch)
	}
	return saveFigure(histWidth, 8*vg.Inch, func(c draw.Canvas) {
		drawTiles(c, [][]*plot.Plot{{signed}, {abso}})
	})
}

// logHist adds h to p on a log count axis (an empty bin draws nothing), and the lines.
func logHist(p *plot.Plot, h *plotter.Histogram, lines vLines) {
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.Text = "rows (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	h.LogY = true
	p.Add(plotter.NewGrid(), h, lines)
	p.Y.Min = 0.5 // a bin of one row shows
	p.Y.Max = max(p.Y.Max*3, 10)
}

// histogram bins values into n equal bins over [lo, hi] (a degenerate range gets a width
// of 1e-9); a value outside goes into the nearest end bin.
func histogram(vals []float64, n int, lo, hi float64) *plotter.Histogram {
	if !(hi > lo) {
		lo, hi = lo-1e-9, lo+1e-9
	}
	w := (hi - lo) / float64(n)
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min, bins[i].Max = lo+float64(i)*w, lo+float64(i+1)*w
	}
	for _, v := range vals {
		i := min(max(int((v-lo)/w), 0), n-1)
		bins[i].Weight++
	}
	return &plotter.Histogram{Bins: bins, Width: w, FillColor: color.RGBA{R: 70, G: 110, B: 190, A: 255}, LineStyle: plotter.DefaultLineStyle}
}
