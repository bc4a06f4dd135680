package compiler

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"

	"github.com/nicc-dev/nicc/distill"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Files nicc diff writes into its --out directory (each as .png and .svg).
const (
	DiffHeatmaps  = "diff_heatmaps"  // action heatmaps, float and student side by side
	DiffHistogram = "diff_histogram" // histogram of Δy
)

// heatPrev is one fixed previous state (a_{t-2}, o_{t-1}) of the NIC paper's Fig. 5.
type heatPrev struct {
	name        string
	aPrev2, obs float64
}

// heatPrevs are Fig. 5's previous states, T = target·scale of distill.DefaultRLCC (0.768).
func heatPrevs() []heatPrev {
	t := distill.DefaultRLCC.T()
	return []heatPrev{
		{"steady state (a_{t-2}=1, o_{t-1}=0)", 1, 0},
		{"under-utilised (a_{t-2}=1, o_{t-1}=-T)", 1, -t},
		{"congested (a_{t-2}=1, o_{t-1}=50T)", 1, 50 * t},
	}
}

// heatGrid is a policy's output over (a_{t-1}, o_t) cells for one previous state.
type heatGrid struct {
	xs, ys []float64
	z      [][]float64 // z[row][col]
}

func (g *heatGrid) Dims() (c, r int)   { return len(g.xs), len(g.ys) }
func (g *heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g *heatGrid) X(c int) float64    { return g.xs[c] }
func (g *heatGrid) Y(r int) float64    { return g.ys[r] }
func (g *heatGrid) Min() float64       { return -1 }
func (g *heatGrid) Max() float64       { return 1 }
func newHeatGrid(cols, rows int) *heatGrid {
	return &heatGrid{xs: make([]float64, cols), ys: make([]float64, rows)}
}

// Heatmap resolution: a_{t-1} on [0.8, 1.2], o_t on [−T, 100·T] (the sampler's ranges).
const heatCols, heatRows = 41, 61

func evalGrid(f func([]float64) float64, p heatPrev) *heatGrid {
	s := distill.DefaultRLCC
	t := s.T()
	g := newHeatGrid(heatCols, heatRows)
	for c := range heatCols {
		g.xs[c] = s.AMin + (s.AMax-s.AMin)*float64(c)/float64(heatCols-1)
	}
	for r := range heatRows {
		g.ys[r] = -t + 101*t*float64(r)/float64(heatRows-1)
	}
	g.z = make([][]float64, heatRows)
	for r := range heatRows {
		g.z[r] = make([]float64, heatCols)
		for c := range heatCols {
			g.z[r][c] = f([]float64{g.xs[c], g.ys[r], p.aPrev2, p.obs})
		}
	}
	return g
}

// plotDiff writes the heatmaps (teachers of the 4 RL-CC inputs only) and the Δy histogram into dir,
// adding the file names to r.Plots.
func plotDiff(r *DiffReport, dir string) error {
	if r.rlcc {
		cm := moreland.SmoothBlueRed()
		cm.SetMin(-1)
		cm.SetMax(1)
		pal := cm.Palette(64)
		prevs := heatPrevs()
		tiles := make([][]*plot.Plot, len(prevs))
		for i, p := range prevs {
			for k, f := range []func([]float64) float64{r.teacher, r.student} {
				pl := plot.New()
				who := "float teacher"
				if k == 1 {
					who = "student (" + r.Against + ")"
					if r.studentQ {
						who = "quantized (" + r.Against + ")"
					}
				}
				pl.Title.Text = fmt.Sprintf("%s: %s", who, p.name)
				pl.Title.TextStyle.Font.Size = vg.Points(9)
				pl.X.Label.Text = "a_{t-1}"
				pl.Y.Label.Text = "o_t"
				hm := plotter.NewHeatMap(evalGrid(f, p), pal)
				hm.Min, hm.Max = -1, 1
				pl.Add(hm)
				tiles[i] = append(tiles[i], pl)
			}
		}
		bar := plot.New()
		bar.Title.Text = "policy output y (the multiplier 1+0.2y, or 1/(1-0.2y) below 0): blue decrease, red increase"
		bar.Title.TextStyle.Font.Size = vg.Points(9)
		bar.HideY()
		bar.Add(&plotter.ColorBar{ColorMap: cm})
		files, err := saveTiles(tiles, bar, 10*vg.Inch, 13.8*vg.Inch, filepath.Join(dir, DiffHeatmaps))
		if err != nil {
			return err
		}
		r.Plots = append(r.Plots, files...)
	}
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("Δy = student − teacher over %d rows (%s)", r.Stats.Rows, r.Against)
	pl.X.Label.Text = "Δy"
	pl.Y.Label.Text = "rows"
	h, err := histogram(r.dy, 60)
	if err != nil {
		return err
	}
	pl.Add(h)
	files, err := saveTiles([][]*plot.Plot{{pl}}, nil, 7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, DiffHistogram))
	if err != nil {
		return err
	}
	r.Plots = append(r.Plots, files...)
	return nil
}

// histogram bins values into n equal bins (a degenerate range gets a width of 1e-9).
func histogram(vals []float64, n int) (*plotter.Histogram, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	if len(vals) == 0 {
		lo, hi = 0, 0
	}
	if hi <= lo {
		lo, hi = lo-1e-9, hi+1e-9
	}
	w := (hi - lo) / float64(n)
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min, bins[i].Max = lo+float64(i)*w, lo+float64(i+1)*w
	}
	for _, v := range vals {
		i := min(int((v-lo)/w), n-1)
		bins[i].Weight++
	}
	return &plotter.Histogram{Bins: bins, Width: w, FillColor: color.RGBA{R: 70, G: 110, B: 190, A: 255}, LineStyle: plotter.DefaultLineStyle}, nil
}

// saveTiles draws the plots as rows×cols tiles, and footer (if any) in a strip below them,
// into base.png and base.svg.
func saveTiles(tiles [][]*plot.Plot, footer *plot.Plot, w, h vg.Length, base string) ([]string, error) {
	t := draw.Tiles{Rows: len(tiles), Cols: len(tiles[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	render := func(c draw.Canvas) {
		if footer != nil {
			foot := 0.8 * vg.Inch
			bottom, top := c, c
			bottom.Max.Y = c.Min.Y + foot
			top.Min.Y = c.Min.Y + foot
			footer.Draw(draw.Crop(bottom, vg.Inch, -vg.Inch, vg.Millimeter*2, 0))
			c = top
		}
		cs := plot.Align(tiles, t, c)
		for i, row := range tiles {
			for j, p := range row {
				p.Draw(cs[i][j])
			}
		}
	}
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	render(draw.New(png))
	svg := vgsvg.New(w, h)
	render(draw.New(svg))
	var files []string
	for _, out := range []struct {
		file string
		wt   io.WriterTo
	}{{base + ".png", vgimg.PngCanvas{Canvas: png}}, {base + ".svg", svg}} {
		if err := writeOutTo(out.file, out.wt); err != nil {
			return nil, err
		}
		files = append(files, out.file)
	}
	return files, nil
}
