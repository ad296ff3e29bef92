package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart sizes.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 3.6 * vg.Inch
)

// seriesColors are the colors of series (models, routes), from the
// Okabe-Ito palette that stays distinguishable for color-blind readers.
var seriesColors = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{86, 180, 233, 255},  // sky
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{240, 228, 66, 255},  // yellow
	color.RGBA{0, 0, 0, 255},       // black
}

func seriesColor(i int) color.Color { return seriesColors[i%len(seriesColors)] }

// svgOf renders p as an SVG element to inline into HTML: the XML prolog,
// the generator comment and the namespace declarations are dropped (the
// HTML parser puts <svg> in the SVG namespace), so the page carries no URL
// at all, and the element gets an accessible role and label.
func svgOf(p *plot.Plot, w, h vg.Length, label string) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg ")
	if i < 0 {
		return "", fmt.Errorf("plot output has no <svg> element")
	}
	s = xmlSafe(s[i:])
	s = strings.Replace(s, "\n\txmlns=\"http://www.w3.org/2000/svg\"", "", 1)
	s = strings.Replace(s, "\n\txmlns:xlink=\"http://www.w3.org/1999/xlink\"", "", 1)
	if strings.Contains(s, "xmlns") {
		return "", fmt.Errorf("plot output declares an unexpected namespace")
	}
	attrs := fmt.Sprintf(`<svg role="img" aria-label="%s" class="chart" `, template.HTMLEscapeString(xmlSafe(label)))
	s = attrs + strings.TrimPrefix(s, "<svg ")
	return template.HTML(s), nil // the SVG is gonum's output with escaped text
}

// xmlSafe replaces what XML does not allow (invalid UTF-8, control
// characters other than tab, newline and carriage return, U+FFFE, U+FFFF)
// with U+FFFD. Names on a chart come from records, which may hold anything.
func xmlSafe(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// newPlot is a plot with the report's common styling.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// point is one dot with a vertical interval.
type point struct {
	x, y, low, high float64
}

// intervalPoints plots points with error bars.
type intervalPoints []point

func (p intervalPoints) Len() int                    { return len(p) }
func (p intervalPoints) XY(i int) (float64, float64) { return p[i].x, p[i].y }
func (p intervalPoints) YError(i int) (float64, float64) {
	return p[i].y - p[i].low, p[i].high - p[i].y
}
func (p intervalPoints) xys() plotter.XYs       { xy, _ := plotter.CopyXYs(p); return xy }
func (xy xyLabels) Len() int                    { return len(xy.pts) }
func (xy xyLabels) XY(i int) (float64, float64) { return xy.pts[i].X, xy.pts[i].Y }
func (xy xyLabels) Label(i int) string          { return xy.labels[i] }
func (v plotterValues) Len() int                { return len(v) }
func (v plotterValues) Value(i int) float64     { return v[i] }
func (g heatGrid) Dims() (int, int)             { return len(g.cols), len(g.rows) }
func (g heatGrid) X(c int) float64              { return float64(c) }
func (g heatGrid) Y(r int) float64              { return float64(r) }
func (g heatGrid) Z(c, r int) float64           { return g.z[r][c] }
func (l legendOnly) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: l.c, Radius: vg.Points(4), Shape: l.shape}, c.Center())
}

type xyLabels struct {
	pts    plotter.XYs
	labels []string
}

type plotterValues []float64

type heatGrid struct {
	rows, cols []string
	z          [][]float64
}

// timeTicks put ticks on whole minutes, hours or days (UTC), at most about
// seven.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	steps := []float64{60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if (hi-lo)/s <= 6 {
			step = s
			break
		}
	}
	format := "Jan 2 15:04"
	if step >= 86400 {
		format = "Jan 2"
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: time.Unix(int64(v), 0).UTC().Format(format)})
	}
	if len(ticks) < 2 {
		return plot.TimeTicks{Format: "Jan 2 15:04", Time: func(v float64) time.Time { return time.Unix(int64(v), 0).UTC() }}.Ticks(lo, hi)
	}
	return ticks
}

// percentTicks label 0 to 100 only, whatever room the legend takes above.
var percentTicks = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 20, Label: "20"}, {Value: 40, Label: "40"},
	{Value: 60, Label: "60"}, {Value: 80, Label: "80"}, {Value: 100, Label: "100"}}

// legendOnly is a legend entry without data.
type legendOnly struct {
	c     color.Color
	shape draw.GlyphDrawer
}

// rateChart plots success rates with their 95% intervals: one x position
// per category, one colored series per group, each series shifted a little
// so the intervals do not overlap.
func rateChart(title, xLabel string, categories, groups []string, rate func(cat, group int) (point, bool)) (*plot.Plot, error) {
	p := newPlot(title, xLabel, "success rate (%)")
	p.NominalX(categories...)
	p.Y.Min, p.Y.Max = 0, 100+6*float64(len(groups)) // room for the legend
	p.Y.Tick.Marker = percentTicks
	width := 0.6
	for g := range groups {
		var pts intervalPoints
		shift := 0.0
		if len(groups) > 1 {
			shift = -width/2 + width*float64(g)/float64(len(groups)-1)
		}
		for c := range categories {
			pt, ok := rate(c, g)
			if !ok {
				continue
			}
			pt.x = float64(c) + shift
			pts = append(pts, pt)
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.xys())
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(g), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = seriesColor(g)
		eb.LineStyle.Width = vg.Points(1.2)
		p.Add(eb, sc)
		p.Legend.Add(groups[g], sc)
	}
	p.X.Min, p.X.Max = -0.6, float64(len(categories))-0.4
	return p, nil
}

// stackedChart plots stacked bars: one bar per category, one layer per
// series.
func stackedChart(title, yLabel string, categories, series []string, value func(cat, ser int) float64) (*plot.Plot, error) {
	p := newPlot(title, "", yLabel)
	p.NominalX(categories...)
	var below *plotter.BarChart
	for s := range series {
		vals := make(plotterValues, len(categories))
		for c := range categories {
			vals[c] = value(c, s)
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(26))
		if err != nil {
			return nil, err
		}
		bars.Color = seriesColor(s)
		bars.LineStyle.Width = vg.Points(0.3)
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(series[s], bars)
	}
	p.Y.Min = 0
	return p, nil
}

// glyphShapes tell series of one color apart.
var glyphShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// scatterPoint is one point of a scatter chart: its color group, its shape
// group, and an optional text label.
type scatterPoint struct {
	xy           plotter.XY
	color, shape int
	label        string
}

// scatterChart plots points, one legend entry per (color, shape) pair named
// by legend, with their labels, and, when line is set, the line
// y = line[0] + line[1]*x over the points' x range.
func scatterChart(title, xLabel, yLabel string, pts []scatterPoint, legend func(color, shape int) string, line *[2]float64) (*plot.Plot, error) {
	p := newPlot(title, xLabel, yLabel)
	p.Legend.Left = true
	type key struct{ color, shape int }
	var order []key
	groups := map[key]plotter.XYs{}
	var lpts plotter.XYs
	var labels []string
	for _, pt := range pts {
		k := key{pt.color, pt.shape}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], pt.xy)
		if pt.label != "" {
			lpts = append(lpts, pt.xy)
			labels = append(labels, pt.label)
		}
	}
	for _, k := range order {
		sc, err := plotter.NewScatter(groups[k])
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(k.color), Radius: vg.Points(4), Shape: glyphShapes[k.shape%len(glyphShapes)]}
		p.Add(sc)
		p.Legend.Add(legend(k.color, k.shape), sc)
	}
	if len(lpts) > 0 {
		lb, err := plotter.NewLabels(xyLabels{pts: lpts, labels: labels})
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].XAlign = draw.XLeft
			lb.TextStyle[i].YAlign = draw.YBottom
			lb.TextStyle[i].Font.Size = vg.Points(8)
		}
		lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(2)}
		p.Add(lb)
	}
	var all plotter.XYs
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		all = append(all, pt.xy)
		lo, hi = math.Min(lo, pt.xy.Y), math.Max(hi, pt.xy.Y)
	}
	if len(pts) > 0 { // room above the points for the legend
		span := hi - lo
		if span == 0 {
			span = 10
		}
		p.Y.Min, p.Y.Max = lo-0.05*span, hi+(0.15+0.08*float64(len(order)+1))*span
	}
	if line != nil && len(all) > 0 {
		pts := all
		lo, hi := pts[0].X, pts[0].X
		for _, pt := range pts {
			lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
		}
		fit, err := plotter.NewLine(plotter.XYs{{X: lo, Y: line[0] + line[1]*lo}, {X: hi, Y: line[0] + line[1]*hi}})
		if err != nil {
			return nil, err
		}
		fit.LineStyle.Color = seriesColor(5)
		fit.LineStyle.Width = vg.Points(1.5)
		fit.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(fit)
		p.Legend.Add("least-squares fit", fit)
	}
	return p, nil
}

// ramp is a palette of given colors.
type ramp []color.Color

func (r ramp) Colors() []color.Color { return r }

// blues is a sequential palette from near white (0%) to a medium blue
// (100%), light enough everywhere for black cell labels.
func blues(n int) ramp {
	lo, hi := [3]float64{247, 251, 255}, [3]float64{66, 146, 198}
	out := make(ramp, n)
	for i := range out {
		f := float64(i) / float64(n-1)
		c := func(k int) uint8 { return uint8(math.Round(lo[k] + f*(hi[k]-lo[k]))) }
		out[i] = color.RGBA{c(0), c(1), c(2), 255}
	}
	return out
}

// heatChart plots a rows x cols grid of values in [0, 100]; NaN cells (no
// problems) are drawn light grey.
func heatChart(title, xLabel, yLabel string, g heatGrid) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	hm := plotter.NewHeatMap(g, blues(51))
	hm.Min, hm.Max = 0, 100
	hm.NaN = color.RGBA{200, 200, 200, 255}
	p.Add(hm)
	p.NominalX(g.cols...)
	p.NominalY(g.rows...)
	p.X.Min, p.X.Max = -0.5, float64(len(g.cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.rows))-0.5
	var pts plotter.XYs
	var labels []string
	for r := range g.rows {
		for c := range g.cols {
			if v := g.z[r][c]; !math.IsNaN(v) {
				pts = append(pts, plotter.XY{X: float64(c), Y: float64(r)})
				labels = append(labels, fmt.Sprintf("%.0f", v))
			}
		}
	}
	if len(pts) > 0 {
		lb, err := plotter.NewLabels(xyLabels{pts: pts, labels: labels})
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].XAlign = draw.XCenter
			lb.TextStyle[i].YAlign = draw.YCenter
		}
		p.Add(lb)
	}
	return p, nil
}

// timeSeries is one line of a time chart.
type timeSeries struct {
	name   string
	pts    plotter.XYs
	marked plotter.XYs // points drawn with a regression marker
}

// timeChart plots series over time (x in Unix seconds), with marked points
// drawn as red crosses.
func timeChart(title, yLabel string, series []timeSeries) (*plot.Plot, error) {
	p := newPlot(title, "time (UTC)", yLabel)
	p.X.Tick.Marker = timeTicks{}
	p.Y.Min, p.Y.Max = 0, 100+6*float64(len(series)+1)
	p.Y.Tick.Marker = percentTicks
	anyMarked := false
	for i, s := range series {
		l, sc, err := plotter.NewLinePoints(s.pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle.Color = seriesColor(i)
		l.LineStyle.Width = vg.Points(1.5)
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
		if len(s.marked) > 0 {
			m, err := plotter.NewScatter(s.marked)
			if err != nil {
				return nil, err
			}
			m.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{200, 0, 0, 255}, Radius: vg.Points(6), Shape: draw.CrossGlyph{}}
			p.Add(m)
			anyMarked = true
		}
	}
	if anyMarked {
		p.Legend.Add("regression", legendOnly{c: color.RGBA{200, 0, 0, 255}, shape: draw.CrossGlyph{}})
	}
	return p, nil
}

// unixSeconds is t as a plot x value.
func unixSeconds(t time.Time) float64 { return float64(t.Unix()) }
