package plot

import (
	"bytes"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Package plot draws nicc's figures (sim, diff, closed-loop diff, sweep, train) from plain
// series: slices of points, labels and titles, never the lab's or the compiler's types. Each
// figure comes back as its PNG and SVG bytes; the caller writes them.
//
// Pieces the figures share: the PNG+SVG renderer, strips of text, a heatmap without seams,
// a colour bar that marks clipped values, labelled vertical lines and integer ticks.

// Figure is a drawn figure, as a PNG (96 dpi) and an SVG of the same size.
type Figure struct {
	PNG, SVG []byte
}

// saveFigure draws the figure at w×h as a PNG and an SVG.
func saveFigure(w, h vg.Length, render func(draw.Canvas)) (*Figure, error) {
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	render(draw.New(png))
	svg := vgsvg.New(w, h)
	render(draw.New(svg))
	var f Figure
	for _, out := range []struct {
		dst *[]byte
		wt  io.WriterTo
	}{{&f.PNG, vgimg.PngCanvas{Canvas: png}}, {&f.SVG, svg}} {
		var b bytes.Buffer
		if _, err := out.wt.WriteTo(&b); err != nil {
			return nil, err
		}
		*out.dst = b.Bytes()
	}
	return &f, nil
}

// cutBottom splits c into a strip of height h at its bottom and the rest above it.
func cutBottom(c draw.Canvas, h vg.Length) (strip, rest draw.Canvas) {
	strip, rest = c, c
	strip.Max.Y = c.Min.Y + h
	rest.Min.Y = c.Min.Y + h
	return strip, rest
}

// cutTop splits c into a strip of height h at its top and the rest below it.
func cutTop(c draw.Canvas, h vg.Length) (strip, rest draw.Canvas) {
	strip, rest = c, c
	strip.Min.Y = c.Max.Y - h
	rest.Max.Y = c.Max.Y - h
	return strip, rest
}

// drawTiles draws the plots as rows×cols aligned tiles on c.
func drawTiles(c draw.Canvas, tiles [][]*plot.Plot) {
	t := draw.Tiles{Rows: len(tiles), Cols: len(tiles[0]), PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 5,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	cs := plot.Align(tiles, t, c)
	for i, row := range tiles {
		for j, p := range row {
			p.Draw(cs[i][j])
		}
	}
}

// textStyle is the plots' font at size, aligned as given.
func textStyle(size vg.Length, x draw.XAlignment, y draw.YAlignment) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler,
		XAlign: x, YAlign: y}
}

// wrapText breaks each line of s at spaces so that no line is wider than width in sty's font
// (a word wider than width stays whole on its own line): titles were cut at both edges.
func wrapText(sty text.Style, s string, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(line) {
			if next := strings.TrimPrefix(cur+" "+w, " "); cur == "" || sty.Width(next) <= width {
				cur = next
				continue
			}
			out = append(out, cur)
			cur = w
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// wrapTitle wraps p's title to width in its own font.
func wrapTitle(p *plot.Plot, width vg.Length) {
	p.Title.Text = wrapText(p.Title.TextStyle, p.Title.Text, width)
}

// drawLines writes lines of text from the top left of c (centred when centre is set).
func drawLines(c draw.Canvas, size vg.Length, centre bool, lines ...string) {
	sty := textStyle(size, draw.XLeft, draw.YTop)
	x := c.Min.X + vg.Millimeter*3
	if centre {
		sty.XAlign, x = draw.XCenter, (c.Min.X+c.Max.X)/2
	}
	y := c.Max.Y - vg.Millimeter
	for _, l := range lines {
		for _, l := range strings.Split(wrapText(sty, l, c.Max.X-c.Min.X-vg.Millimeter*6), "\n") {
			c.FillText(sty, vg.Point{X: x, Y: y}, l)
			y -= sty.Height(l) + size/4
		}
	}
}

// colourScale maps values on [lo, hi] onto a palette; values outside get under and over
// (colours the palette does not hold), NaN gets nanColour.
type colourScale struct {
	lo, hi      float64
	pal         []color.Color
	under, over color.Color
}

var nanColour = color.RGBA{R: 255, G: 0, B: 255, A: 255}

func (s colourScale) colour(v float64) color.Color {
	switch {
	case v < s.lo:
		return s.under
	case v > s.hi:
		return s.over
	case math.IsNaN(v):
		return nanColour
	}
	return s.pal[int((v-s.lo)/(s.hi-s.lo)*float64(len(s.pal)-1)+0.5)]
}

// cells is a heatmap of a grid: every cell filled with its value's colour, overlapping the
// next cell by a hair so that no anti-aliased seam shows between them.
type cells struct {
	g     *Grid
	scale colourScale
}

func (h cells) halfSteps() (hx, hy float64) {
	return (h.g.Xs[1] - h.g.Xs[0]) / 2, (h.g.Ys[1] - h.g.Ys[0]) / 2
}

func (h cells) DataRange() (xmin, xmax, ymin, ymax float64) {
	hx, hy := h.halfSteps()
	return h.g.Xs[0] - hx, h.g.Xs[len(h.g.Xs)-1] + hx, h.g.Ys[0] - hy, h.g.Ys[len(h.g.Ys)-1] + hy
}

func (h cells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	hx, hy := h.halfSteps()
	hair := vg.Points(0.5)
	for r, row := range h.g.Z {
		for k, v := range row {
			x0, x1 := trX(h.g.Xs[k]-hx), trX(h.g.Xs[k]+hx)
			y0, y1 := trY(h.g.Ys[r]-hy), trY(h.g.Ys[r]+hy)
			if k < len(row)-1 {
				x1 += hair
			}
			if r < len(h.g.Z)-1 {
				y1 += hair
			}
			c.FillPolygon(h.scale.colour(v), []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		}
	}
}

// colourBar draws a scale's palette from lo to hi along x, with a triangle in the under
// (over) colour beyond the end when markUnder (markOver) is set: values clipped there.
type colourBar struct {
	scale               colourScale
	markUnder, markOver bool
}

// barEnd is how far a clip marker reaches beyond the bar, as a fraction of its range.
const barEnd = 0.06

func (b colourBar) DataRange() (xmin, xmax, ymin, ymax float64) {
	ext := barEnd * (b.scale.hi - b.scale.lo)
	xmin, xmax = b.scale.lo, b.scale.hi
	if b.markUnder {
		xmin -= ext
	}
	if b.markOver {
		xmax += ext
	}
	return xmin, xmax, 0, 1
}

func (b colourBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	s := b.scale
	n := len(s.pal)
	step := (s.hi - s.lo) / float64(n)
	y0, y1 := trY(0), trY(1)
	for i, col := range s.pal {
		x0, x1 := trX(s.lo+float64(i)*step), trX(s.lo+float64(i+1)*step)
		if i < n-1 {
			x1 += vg.Points(0.5)
		}
		c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
	ext := barEnd * (s.hi - s.lo)
	edge := draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}
	for _, m := range []struct {
		on       bool
		base, to float64
		col      color.Color
	}{{b.markUnder, s.lo, s.lo - ext, s.under}, {b.markOver, s.hi, s.hi + ext, s.over}} {
		if !m.on {
			continue
		}
		tri := []vg.Point{{X: trX(m.base), Y: y0}, {X: trX(m.to), Y: (y0 + y1) / 2}, {X: trX(m.base), Y: y1}}
		c.FillPolygon(m.col, tri)
		c.StrokeLines(edge, append(tri, tri[0]))
	}
}

// vLine is a vertical line across the plot at x, labelled.
type vLine struct {
	x     float64
	label string
	style draw.LineStyle
}

// vLines draws lines across the whole height of the plot, each label at the top, one below
// the other so that close lines keep their labels apart; a line in the right third of the
// plot has its label on its left. They have no DataRange: the plot's range must hold them.
type vLines []vLine

func (ls vLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := textStyle(vg.Points(8), draw.XLeft, draw.YTop)
	y := c.Max.Y - vg.Points(2)
	for _, l := range ls {
		x := trX(l.x)
		c.StrokeLine2(l.style, x, c.Min.Y, x, c.Max.Y)
		s, tx := sty, x+vg.Points(3)
		if x > c.Min.X+2*(c.Max.X-c.Min.X)/3 {
			s.XAlign, tx = draw.XRight, x-vg.Points(3)
		}
		s.Color = l.style.Color
		box := s.Rectangle(l.label).Add(vg.Point{X: tx, Y: y})
		c.FillPolygon(color.NRGBA{R: 255, G: 255, B: 255, A: 200}, []vg.Point{box.Min, {X: box.Max.X, Y: box.Min.Y}, box.Max, {X: box.Min.X, Y: box.Max.Y}})
		c.FillText(s, vg.Point{X: tx, Y: y}, l.label)
		y -= s.Height(l.label) + vg.Points(2)
	}
}

// intTicks are the ticks of an axis of integers (cycles): the default ticks that fall on
// integers, labelled without a fraction, or one tick per integer step when fewer than two
// labelled ones are left.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	labelled := 0
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
			labelled++
		}
		ts = append(ts, t)
	}
	if labelled >= 2 {
		return ts
	}
	ts = ts[:0]
	step := max(1, math.Ceil((hi-lo)/6))
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ts
}

// niceCeil is the smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6 and 8 times a power of ten at or
// above v > 0: a round bound that wastes at most a third of a colour scale.
func niceCeil(v float64) float64 {
	e := math.Floor(math.Log10(v))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		// One correctly rounded operation: 1.5/10 is the double nearest 0.15.
		b := m * math.Pow(10, e)
		if e < 0 {
			b = m / math.Pow(10, -e)
		}
		if b >= v {
			return b
		}
	}
	return math.Pow(10, e+1)
}

// barTicks label a colour bar on [−lim, lim] at its ends, halves and 0.
func barTicks(lim float64) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for _, f := range []float64{-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1} {
		t := plot.Tick{Value: f * lim}
		if f == math.Trunc(2*f)/2 {
			t.Label = strconv.FormatFloat(f*lim, 'g', 4, 64)
		}
		ts = append(ts, t)
	}
	return ts
}
