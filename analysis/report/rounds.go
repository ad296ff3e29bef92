package report

import (
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"repot.dev/repot-operator/analysis/summary"
)

// roundsSection draws VRR-Stop's figure for every method that recorded its
// repair loop: the share of runs whose committed plan is truly valid
// (solid) and the share the verifier's verdict accepts (dashed) after each
// round, with the per-round table (docs/vrr.md).
func roundsSection(b *sectionBuilder, sum summary.Summary) {
	type series struct {
		name   string
		rounds []summary.RoundSummary
	}
	var all []series
	t := table{Header: []string{"model / method", "round", "entered", "left solved", "alpha (hits/trials)", "beta (hits/trials)", "prefix shortened", "tokens", "valid after", "accepted after"}}
	for _, m := range sum.Models {
		for _, ms := range m.Methods {
			if len(ms.Rounds) == 0 {
				continue
			}
			name := m.Model + " / " + ms.Method
			all = append(all, series{name, ms.Rounds})
			for _, r := range ms.Rounds {
				alpha, beta := "-", "-"
				if r.K > 0 && r.AlphaTrials > 0 {
					alpha = formatPermille(r.AlphaPermille) + " (" + fraction(r.AlphaHits, r.AlphaTrials) + ")"
				}
				if r.K > 0 && r.BetaTrials > 0 {
					beta = formatPermille(r.BetaPermille) + " (" + fraction(r.BetaHits, r.BetaTrials) + ")"
				}
				t.Rows = append(t.Rows, []string{name, strconv.Itoa(r.K), strconv.Itoa(r.Entered), strconv.Itoa(r.LeftSolved), alpha, beta,
					strconv.Itoa(r.Shortened), strconv.FormatInt(r.Tokens, 10),
					formatPermille(r.ValidAtPermille) + " (" + fraction(r.ValidAt, r.Runs) + ")",
					formatPermille(r.AcceptedAtPermille) + " (" + fraction(r.AcceptedAt, r.Runs) + ")"})
			}
		}
	}
	if len(all) == 0 {
		return
	}
	const title = "True validity and observed acceptance by repair round"
	p := newPlot(title, "round (0: the first plan)", "runs (%)")
	p.Y.Min, p.Y.Max = 0, 100+8*float64(2*len(all)+1)
	p.Y.Tick.Marker = percentTicks
	p.X.Min = -0.2
	var err error
	for i, s := range all {
		valid, accepted := make(plotter.XYs, len(s.rounds)), make(plotter.XYs, len(s.rounds))
		for j, r := range s.rounds {
			valid[j] = plotter.XY{X: float64(r.K), Y: float64(r.ValidAtPermille) / 10}
			accepted[j] = plotter.XY{X: float64(r.K), Y: float64(r.AcceptedAtPermille) / 10}
			p.X.Max = max(p.X.Max, float64(r.K)+0.2)
		}
		for _, c := range []struct {
			label  string
			pts    plotter.XYs
			dashed bool
		}{{s.name + ": valid", valid, false}, {s.name + ": accepted", accepted, true}} {
			l, sc, e := plotter.NewLinePoints(c.pts)
			if e != nil {
				err = e
				break
			}
			l.LineStyle.Color, l.LineStyle.Width = seriesColor(i), vg.Points(1.5)
			shape := draw.GlyphDrawer(draw.CircleGlyph{})
			if c.dashed {
				l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				shape = draw.TriangleGlyph{}
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(2.5), Shape: shape}
			p.Add(l, sc)
			p.Legend.Add(c.label, l, sc)
		}
	}
	var ticks plot.ConstantTicks
	for k := 0; float64(k) <= p.X.Max; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = ticks
	var pl *plot.Plot
	if err == nil {
		pl = p
	}
	b.add("rounds", title,
		"Solid lines: the share of runs whose committed plan reaches the goal under exact replay after each round (a run that stopped counts with the plan it stopped on). Dashed: the share whose plan the verifier's verdict accepts, which with a noisy verifier can rise while validity falls. The table gives each round's entries, the empirical repair success alpha and breakage beta, and its tokens.",
		pl, err, t)
}

// formatPermille formats thousandths as a percentage with one decimal.
func formatPermille(v int) string {
	return strconv.Itoa(v/10) + "." + strconv.Itoa(v%10) + "%"
}
