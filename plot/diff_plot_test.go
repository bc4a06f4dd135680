package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0.11, "0.15"}, {0.15, "0.15"}, {0.2, "0.2"}, {0.6184, "0.8"}, {0.007171, "0.008"}, {0.003179, "0.004"},
		{1, "1"}, {1.2, "1.5"}, {9, "10"}, {2.05, "2.5"}, {3e-7, "3e-07"},
	} {
		// The bound prints as the round decimal it is (no 0.15000000000000002).
		if got := strconv.FormatFloat(niceCeil(c.v), 'g', -1, 64); got != c.want {
			t.Errorf("niceCeil(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// heatReport is the heatmaps of teacher and student over the default sampler's grid (the
// student's row as the teacher's, a float student).
func heatReport(teacher, student func([]float64) float64) Heatmaps {
	var h Heatmaps
	grid := func(f func([]float64) float64, p rlcc.HeatState) *Grid {
		g := &Grid{Z: make([][]float64, rlcc.HeatRows)}
		g.Xs, g.Ys = p.Axes()
		for r := range rlcc.HeatRows {
			g.Z[r] = make([]float64, rlcc.HeatCols)
			for c := range rlcc.HeatCols {
				g.Z[r][c] = f(p.InputIn(nicsdk.DefaultLayout, g.Xs[c], g.Ys[r]))
			}
		}
		return g
	}
	for _, p := range rlcc.HeatStates(rlcc.DefaultSampler) {
		row := HeatRow{Name: p.Name, Float: grid(teacher, p), Student: grid(student, p), Diff: grid(teacher, p)}
		for i, z := range row.Diff.Z {
			for j := range z {
				z[j] = row.Student.Z[i][j] - z[j]
			}
		}
		h.Rows = append(h.Rows, row)
	}
	h.Title, h.Student, h.Notes = "nicc diff: t.json (mlp) against test student", "test student", []string{"a note"}
	return h
}

// countBeyond is how many cells of the grids lie below −lim and above lim.
func countBeyond(gs []*Grid, lim float64) (under, over, cells int) {
	for _, g := range gs {
		for _, row := range g.Z {
			for _, v := range row {
				cells++
				if v < -lim {
					under++
				}
				if v > lim {
					over++
				}
			}
		}
	}
	return under, over, cells
}

func TestHeatFigureClipsAndCounts(t *testing.T) {
	// The student's y runs from −1.95 to 2.05 along a_{t-1} (columns 0.80, 0.81, … 1.20):
	// below −1 on the 10 columns a < 0.895, above 1 on the 11 columns a > 1.095.
	student := func(x []float64) float64 { return 10*(x[0]-1) + 0.05 }
	f := newHeatFigure(heatReport(func([]float64) float64 { return 0 }, student))
	rows := rlcc.HeatRows * len(rlcc.HeatStates(rlcc.DefaultSampler))
	if f.yLim != 1 || f.under != 10*rows || f.over != 11*rows || f.cells != 2*rlcc.HeatCols*rows {
		t.Errorf("yLim %v, under %d, over %d, cells %d; want 1, %d, %d, %d", f.yLim, f.under, f.over, f.cells, 10*rows, 11*rows, 2*rlcc.HeatCols*rows)
	}
	// Every value beyond the scale is counted, none inside it.
	u, o, n := countBeyond(append(slices.Clone(f.float), f.student...), f.yLim)
	if u != f.under || o != f.over || n != f.cells {
		t.Errorf("grids hold %d under, %d over of %d; figure says %d, %d of %d", u, o, n, f.under, f.over, f.cells)
	}
	// The difference scale holds every difference (no clipping there): max |Δy| 2.05 → ±2.5.
	if math.Abs(f.maxDiff-2.05) > 1e-9 || f.dLim != 2.5 {
		t.Errorf("max diff %v, dLim %v; want 2.05, 2.5", f.maxDiff, f.dLim)
	}
	if u, o, _ := countBeyond(f.diff, f.dLim); u+o != 0 {
		t.Errorf("%d differences outside ±%v", u+o, f.dLim)
	}
	// Clipped cells get the marker colours, the ends of the scale the palette's ends.
	ys := f.yScale()
	if ys.colour(-1.2) != underColour || ys.colour(1.01) != overColour || ys.colour(1) != ys.pal[len(ys.pal)-1] || ys.colour(-1) != ys.pal[0] {
		t.Error("colours beyond or at the ends of the y scale")
	}
	// y = ±1 exactly is on the scale, not beyond it.
	ends := newHeatFigure(heatReport(func([]float64) float64 { return 0 }, func(x []float64) float64 { return min(max(10*(x[0]-1), -1), 1) }))
	if ends.yLim != 1 || ends.under+ends.over != 0 {
		t.Errorf("y on [-1, 1]: yLim %v, %d clipped", ends.yLim, ends.under+ends.over)
	}
	if slices.Contains(ys.pal, color.Color(underColour)) || slices.Contains(ys.pal, color.Color(overColour)) {
		t.Error("a marker colour is in the palette")
	}
}

func TestHeatFigureNarrowScale(t *testing.T) {
	// An output that stays within ±0.11 (an LSTM's first step) gets the scale ±0.15, so
	// that its panels are not flat; nothing is clipped.
	teacher := func(x []float64) float64 { return 0.11 * math.Tanh(x[1]) }
	f := newHeatFigure(heatReport(teacher, teacher))
	if f.yLim != 0.15 || f.under+f.over != 0 || f.maxDiff != 0 || f.dLim != 1e-3 {
		t.Errorf("yLim %v, clipped %d, max diff %v, dLim %v; want 0.15, 0, 0, 0.001", f.yLim, f.under+f.over, f.maxDiff, f.dLim)
	}
	if math.Abs(f.maxY-0.11) > 1e-3 {
		t.Errorf("max |y| %v, want about 0.11", f.maxY)
	}
}

func TestPercentileLines(t *testing.T) {
	marks := []Mark{{"p50", 0.01}, {"p90", 0.02}, {"p99", 0.125}, {"p99.9", 0.3}, {"max", 0.31234567}}
	lines := percentileLines(marks)
	if len(lines) != len(marks) {
		t.Fatalf("%d lines, want %d", len(lines), len(marks))
	}
	for i, w := range marks {
		l := lines[i]
		if l.x != w.Value || l.label != fmt.Sprintf("%s %.4g", w.Name, w.Value) {
			t.Errorf("line %d at %v %q, want %v %q", i, l.x, l.label, w.Value, w.Name)
		}
	}
}

func TestHistogramBins(t *testing.T) {
	vals := []float64{-2, -1, -0.5, 0, 0.25, 0.999, 1, 3}
	h := histogram(vals, 4, -1, 1)
	var got []float64
	for _, b := range h.Bins {
		got = append(got, b.Weight)
	}
	// −2 and 3 lie outside: they go into the end bins; 1 is the top bin's closed end.
	if want := []float64{2, 1, 2, 3}; !slices.Equal(got, want) || h.Bins[0].Min != -1 || h.Bins[3].Max != 1 {
		t.Errorf("bins %v (%v..%v), want %v over -1..1", got, h.Bins[0].Min, h.Bins[3].Max, want)
	}
	if h := histogram([]float64{0.5, 0.5}, 3, 0.5, 0.5); h.Bins[0].Weight+h.Bins[1].Weight+h.Bins[2].Weight != 2 {
		t.Error("degenerate range loses values")
	}
}

func TestIntTicks(t *testing.T) {
	for _, r := range [][2]float64{{185.2, 241.3}, {190, 192.5}, {0.5, 3.2}, {1000, 1003}, {170, 3800}, {12, 12.9}} {
		labelled := 0
		for _, tk := range (intTicks{}).Ticks(r[0], r[1]) {
			if tk.Value != math.Trunc(tk.Value) || tk.Value < r[0] || tk.Value > r[1] {
				t.Errorf("%v: tick %v", r, tk.Value)
			}
			if tk.Label != "" {
				labelled++
				if tk.Label != strconv.Itoa(int(tk.Value)) {
					t.Errorf("%v: tick %v labelled %q", r, tk.Value, tk.Label)
				}
			}
		}
		if labelled < 1 || r[1]-r[0] >= 1 && labelled < 2 {
			t.Errorf("%v: %d labelled ticks", r, labelled)
		}
	}
}

// checkFigures checks each figure is a PNG and an SVG, and returns their bytes by name.
func checkFigures(t *testing.T, figs map[string]*Figure) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, f := range figs {
		if !bytes.HasPrefix(f.PNG, []byte("\x89PNG\r\n")) || len(f.PNG) < 1000 || !bytes.Contains(f.SVG[:min(len(f.SVG), 300)], []byte("<svg")) || len(f.SVG) < 1000 {
			t.Errorf("%s: %d and %d bytes, not a PNG and an SVG", name, len(f.PNG), len(f.SVG))
		}
		out[name+".png"], out[name+".svg"] = f.PNG, f.SVG
	}
	return out
}

// sameFigures fails unless two renders gave the same bytes.
func sameFigures(t *testing.T, a, b map[string][]byte, n int) {
	t.Helper()
	if len(a) != n || len(b) != n {
		t.Errorf("%d and %d files, want %d", len(a), len(b), n)
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// The figures are a PNG and an SVG, the same bytes on every run.
func TestDiffPlotFiles(t *testing.T) {
	render := func() map[string][]byte {
		h, err := HeatmapFigure(heatReport(func(x []float64) float64 { return math.Tanh(x[1] - 3) }, func(x []float64) float64 { return 1.1 * math.Tanh(x[1]-3) }))
		if err != nil {
			t.Fatal(err)
		}
		g, err := HistogramFigure(Histograms{Student: "test student", Rows: 5, DY: []float64{-0.2, 0, 0.01, 0.3, 0.3},
			Marks: []Mark{{"p50", 0.2}, {"p90", 0.3}, {"p99", 0.3}, {"p99.9", 0.3}, {"max", 0.3}}})
		if err != nil {
			t.Fatal(err)
		}
		return checkFigures(t, map[string]*Figure{"heatmaps": h, "histogram": g})
	}
	sameFigures(t, render(), render(), 4)
}

// The diff figures' titles fit their canvas: measured in the font they are drawn with, every
// wrapped line is within the width, and no word is lost (issue 26: the heatmap's and the
// histogram's titles were one line wider than the figure, cut at both edges).
func TestPlotTitlesFit(t *testing.T) {
	headline := "integer network w16/a16, per-channel scales, packed lanes, unit output weights"
	for _, c := range []struct {
		title string
		size  vg.Length
		width vg.Length
	}{
		{"nicc diff: rlcc_teacher.json (mlp) against " + headline + " — the policy's output over (a_{t-1}, o_t) for three previous states (a_{t-2}, o_{t-1})", vg.Points(13), 14*vg.Inch - 6*vg.Millimeter},
		{"Δy = student − float teacher over 20000 rows (student: " + headline + ")", vg.Points(11), histWidth - vg.Inch},
	} {
		sty := textStyle(c.size, draw.XCenter, draw.YTop)
		if sty.Width(c.title) <= c.width {
			t.Fatalf("%q fits in one line: the case tests nothing", c.title)
		}
		wrapped := wrapText(sty, c.title, c.width)
		for _, l := range strings.Split(wrapped, "\n") {
			if w := sty.Width(l); w > c.width {
				t.Errorf("line %q is %v wide, over %v", l, w, c.width)
			}
		}
		if strings.Join(strings.Fields(wrapped), " ") != c.title {
			t.Errorf("wrapping changed the words: %q", wrapped)
		}
	}
}
