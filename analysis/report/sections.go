package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// section is one chart with the table of its numbers.
type section struct {
	ID    string
	Title string
	// Intro says in one or two sentences what the chart shows.
	Intro string
	SVG   template.HTML
	Table table
}

// table is a chart's numbers; the first column holds row headers.
type table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// sectionBuilder makes sections; the first error sticks.
type sectionBuilder struct {
	prefix string
	out    []section
	err    error
}

// add renders p and appends the section.
func (b *sectionBuilder) add(id, title, intro string, p *plot.Plot, err error, t table) {
	if b.err != nil {
		return
	}
	if err != nil {
		b.err = fmt.Errorf("%s: %w", title, err)
		return
	}
	svg, err := svgOf(p, chartWidth, chartHeight, title)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", title, err)
		return
	}
	t.Caption = title + ": the numbers of the chart"
	b.out = append(b.out, section{ID: b.prefix + id, Title: title, Intro: intro, SVG: svg, Table: t})
}

// sourceSections builds the sections of one source; a section without data
// is left out.
func sourceSections(prefix string, s Source) ([]section, error) {
	b := &sectionBuilder{prefix: prefix}
	successSection(b, s.Summary)
	routesSection(b, s.Summary)
	costSection(b, s.Summary)
	roundsSection(b, s.Summary)
	scalingSection(b, s.Scaling)
	heatSections(b, s.Summary)
	energySection(b, s.Energy)
	derailSection(b, s.Derail)
	return b.out, b.err
}

// methodNames is the union of the methods of all models, in summary order.
func methodNames(sum summary.Summary) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range sum.Models {
		for _, ms := range m.Methods {
			if !seen[ms.Method] {
				seen[ms.Method] = true
				out = append(out, ms.Method)
			}
		}
	}
	return out
}

func findMethod(m summary.ModelSummary, method string) *summary.MethodSummary {
	for i := range m.Methods {
		if m.Methods[i].Method == method {
			return &m.Methods[i]
		}
	}
	return nil
}

// ratePoint is a rate as a chart point in percent.
func ratePoint(r summary.Rate) point {
	return point{y: float64(r.Permille) / 10, low: float64(r.LowPermille) / 10, high: float64(r.HighPermille) / 10}
}

func fraction(n, d int) string { return strconv.Itoa(n) + "/" + strconv.Itoa(d) }

func successSection(b *sectionBuilder, sum summary.Summary) {
	methods := methodNames(sum)
	if len(methods) == 0 {
		return
	}
	var models []string
	t := table{Header: []string{"model", "method", "solved", "rate", "95% interval", "infra errors"}}
	for _, m := range sum.Models {
		models = append(models, m.Model)
		for _, ms := range m.Methods {
			t.Rows = append(t.Rows, []string{m.Model, ms.Method, fraction(ms.Solved, ms.Total), ms.Percent, ms.Interval, strconv.Itoa(ms.InfraErrors)})
		}
	}
	p, err := rateChart("Success rate per method and model", "method", methods, models, func(c, g int) (point, bool) {
		ms := findMethod(sum.Models[g], methods[c])
		if ms == nil || ms.Total == 0 {
			return point{}, false
		}
		return ratePoint(ms.Rate), true
	})
	b.add("success", "Success rate per method and model",
		"Dots are success rates over the problems with a result; bars are 95% Wilson score intervals. Runs ended by an infrastructure error are left out and counted apart.",
		p, err, t)
}

func routesSection(b *sectionBuilder, sum summary.Summary) {
	var cats, routes []string
	type cell struct{ model, method int }
	var cells []cell
	seen := map[string]bool{}
	t := table{Header: []string{"model / method", "route", "problems", "solved", "rescue rate"}}
	for mi, m := range sum.Models {
		for ki, ms := range m.Methods {
			if ms.Total == 0 {
				continue
			}
			cats = append(cats, m.Model+" / "+ms.Method)
			cells = append(cells, cell{mi, ki})
			for _, rc := range ms.Routes {
				if !seen[rc.Route] {
					seen[rc.Route] = true
					routes = append(routes, rc.Route)
				}
				t.Rows = append(t.Rows, []string{m.Model + " / " + ms.Method, rc.Route, strconv.Itoa(rc.Count), strconv.Itoa(rc.Solved), dashIfEmpty(rc.RescuePercent)})
			}
		}
	}
	if len(cats) == 0 {
		return
	}
	p, err := stackedChart("Routing distribution", "problems", cats, routes, func(c, r int) float64 {
		ms := sum.Models[cells[c].model].Methods[cells[c].method]
		for _, rc := range ms.Routes {
			if rc.Route == routes[r] {
				return float64(rc.Count)
			}
		}
		return 0
	})
	if err == nil {
		most := 0
		for _, c := range cells {
			most = max(most, sum.Models[c.model].Methods[c.method].Total)
		}
		p.Y.Max = float64(most) * (1.15 + 0.08*float64(len(routes)))
		p.X.Tick.Label.Rotation = math.Pi / 8
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
	}
	b.add("routes", "Routing distribution",
		"Each bar is one method on one model, split by the route its problems took. The rescue rate of a route is the share of its problems that ended solved.",
		p, err, t)
}

func costSection(b *sectionBuilder, sum summary.Summary) {
	var pts []scatterPoint
	methods := methodNames(sum)
	t := table{Header: []string{"model / method", "prompt tokens per problem", "completion tokens per problem", "tokens per problem", "calls per problem", "cost vs pot", "success rate"}}
	for mi, m := range sum.Models {
		for _, ms := range m.Methods {
			if ms.Total == 0 {
				continue
			}
			tok := ms.TokensPerProblem.Prompt + ms.TokensPerProblem.Completion
			pts = append(pts, scatterPoint{xy: plotter.XY{X: float64(tok), Y: float64(ms.Permille) / 10}, color: mi, shape: indexOf(methods, ms.Method)})
			t.Rows = append(t.Rows, []string{m.Model + " / " + ms.Method, strconv.FormatInt(ms.TokensPerProblem.Prompt, 10),
				strconv.FormatInt(ms.TokensPerProblem.Completion, 10), strconv.FormatInt(tok, 10), ms.CallsPerProblem, dashIfEmpty(ms.CostVsPot), ms.Percent})
		}
	}
	if len(pts) == 0 {
		return
	}
	p, err := scatterChart("Cost against accuracy", "tokens per problem (prompt + completion)", "success rate (%)", pts,
		func(c, s int) string { return sum.Models[c].Model + " / " + methods[s] }, nil)
	if err == nil {
		p.Y.Min, p.Y.Max = 0, 100
		p.X.Min = 0
	}
	b.add("cost", "Cost against accuracy",
		"One point per method and model (color: model, shape: method): mean prompt plus completion tokens per problem against the success rate.",
		p, err, t)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return 0
}

func scalingSection(b *sectionBuilder, sc *summary.ScalingReport) {
	if sc == nil || len(sc.Cells) == 0 {
		return
	}
	var pts []scatterPoint
	var models []string
	t := table{Header: []string{"model / environment", "failed first plans", "failed-prefix fraction", "paired problems", "repot solved", "pot-retry solved", "repot - pot-retry (points)"}}
	var sx, sy float64
	for _, c := range sc.Cells {
		x, y := float64(c.FailedPrefixPermille)/1000, float64(c.DeltaPermille)/10
		sx, sy = sx+x, sy+y
		if len(models) == 0 || models[len(models)-1] != c.Model {
			models = append(models, c.Model)
		}
		pts = append(pts, scatterPoint{xy: plotter.XY{X: x, Y: y}, color: len(models) - 1, label: c.Environment})
		t.Rows = append(t.Rows, []string{c.Model + " / " + c.Environment, strconv.Itoa(c.FailedFirstPlans), c.FailedPrefix,
			strconv.Itoa(c.Problems), strconv.Itoa(c.RePoTSolved), strconv.Itoa(c.PoTRetrySolved), c.DeltaPoints})
	}
	var line *[2]float64
	title := "Capability scaling"
	if sc.SlopeDefined {
		slope := float64(sc.SlopeMilli) / 1000
		n := float64(len(pts))
		line = &[2]float64{sy/n - slope*sx/n, slope}
		title = "Capability scaling (slope " + sc.Slope + " points per unit of prefix)"
		t.Rows = append(t.Rows, []string{"least-squares slope", "", "", "", "", "", sc.Slope})
	}
	p, err := scatterChart(title, "mean verified-prefix fraction of failed first plans", "repot - pot-retry (points)", pts,
		func(c, _ int) string { return models[c] }, line)
	b.add("scaling", "Capability scaling",
		"One point per (model, environment): how much of a failed first plan was valid, against how many points repot gains over pot-retry on the same problems. The dashed line is the least-squares fit; its slope is the figure the paper reports.",
		p, err, t)
}

// headlineMethod is the method a heat map shows for a model: repot-adaptive,
// else repot, else the first one.
func headlineMethod(m summary.ModelSummary) *summary.MethodSummary {
	for _, name := range []string{contract.MethodAdaptive, contract.MethodRePoT} {
		if ms := findMethod(m, name); ms != nil && ms.Total > 0 {
			return ms
		}
	}
	if len(m.Methods) > 0 {
		return &m.Methods[0]
	}
	return nil
}

func heatSections(b *sectionBuilder, sum summary.Summary) {
	for i, m := range sum.Models {
		ms := headlineMethod(m)
		if ms == nil || len(ms.ByComplexity) == 0 {
			continue
		}
		var envs []string
		var levels []int
		seenEnv, seenLevel := map[string]bool{}, map[int]bool{}
		for _, c := range ms.ByComplexity {
			if !seenEnv[c.Environment] {
				seenEnv[c.Environment] = true
				envs = append(envs, c.Environment)
			}
			if !seenLevel[c.Complexity] {
				seenLevel[c.Complexity] = true
				levels = append(levels, c.Complexity)
			}
		}
		sort.Ints(levels)
		g := heatGrid{rows: envs, z: make([][]float64, len(envs))}
		col := map[int]int{}
		for j, l := range levels {
			g.cols = append(g.cols, strconv.Itoa(l))
			col[l] = j
		}
		row := map[string]int{}
		for r, e := range envs {
			row[e] = r
			g.z[r] = make([]float64, len(levels))
			for j := range g.z[r] {
				g.z[r][j] = math.NaN()
			}
		}
		t := table{Header: []string{"environment / complexity", "solved", "rate", "95% interval", "calls per problem", "infra errors"}}
		for _, c := range ms.ByComplexity {
			if c.Total > 0 {
				g.z[row[c.Environment]][col[c.Complexity]] = float64(c.Permille) / 10
			}
			t.Rows = append(t.Rows, []string{c.Environment + " / " + strconv.Itoa(c.Complexity), fraction(c.Solved, c.Total), dashIfEmpty(c.Percent), dashIfEmpty(c.Interval), c.CallsPerProblem, strconv.Itoa(c.InfraErrors)})
		}
		title := "Success per environment and complexity: " + m.Model + ", " + ms.Method
		p, err := heatChart(title, "complexity", "", g)
		b.add("heat-"+strconv.Itoa(i), title,
			"Each cell is the success rate (%) of "+ms.Method+" on one environment at one complexity; grey cells have no problems.",
			p, err, t)
	}
}

func energySection(b *sectionBuilder, energy []ModelEnergy) {
	if len(energy) == 0 {
		return
	}
	var models []string
	t := table{Header: []string{"model", "GPU-seconds", "joules", "problems solved", "GPU-seconds per solved", "joules per solved", "readings"}}
	for _, e := range energy {
		models = append(models, e.Model)
		src := "measured (NVML)"
		if e.Simulated {
			src = "simulated"
		}
		t.Rows = append(t.Rows, []string{e.Model, strconv.FormatInt(e.GPUSeconds, 10), strconv.FormatInt(e.Joules, 10), strconv.Itoa(e.Solved),
			perSolved(e.GPUSeconds, e.Solved), perSolved(e.Joules, e.Solved), src})
	}
	// Joules when any model has an energy reading, else GPU-seconds.
	title, unit := "GPU-seconds per solved problem", "GPU-seconds per solved problem"
	value := func(e ModelEnergy) int64 { return e.GPUSeconds }
	for _, e := range energy {
		if e.Joules > 0 {
			title, unit = "Joules per solved problem", "joules per solved problem"
			value = func(e ModelEnergy) int64 { return e.Joules }
		}
	}
	p, err := stackedChart(title, unit, models, []string{unit}, func(c, _ int) float64 {
		if energy[c].Solved == 0 {
			return 0
		}
		return float64(value(energy[c])) / float64(energy[c].Solved)
	})
	b.add("energy", "GPU energy per solved problem",
		"The model servers' GPU time and energy over the evaluation, divided by the problems solved over all methods.",
		p, err, t)
}

func perSolved(v int64, solved int) string {
	if solved == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(v)/float64(solved), 'f', 1, 64)
}

func derailSection(b *sectionBuilder, res []DerailResult) {
	if len(res) == 0 {
		return
	}
	var conds, models []string
	seenC, seenM := map[string]bool{}, map[string]bool{}
	idx := map[[2]string]summary.Rate{}
	t := table{Header: []string{"model / condition", "recovered", "rate", "95% interval"}}
	for _, r := range res {
		if !seenC[r.Condition] {
			seenC[r.Condition] = true
			conds = append(conds, r.Condition)
		}
		if !seenM[r.Model] {
			seenM[r.Model] = true
			models = append(models, r.Model)
		}
		idx[[2]string{r.Model, r.Condition}] = r.Rate
		t.Rows = append(t.Rows, []string{r.Model + " / " + r.Condition, fraction(r.Rate.Solved, r.Rate.Total), r.Rate.Percent, r.Rate.Interval})
	}
	p, err := rateChart("Derail-550 recovery per condition", "condition", conds, models, func(c, g int) (point, bool) {
		r, ok := idx[[2]string{models[g], conds[c]}]
		if !ok || r.Total == 0 {
			return point{}, false
		}
		return ratePoint(r), true
	})
	b.add("derail", "Derail-550 recovery per condition",
		"Recovery rate with 95% intervals when one wrong action was injected a third of the way through an oracle plan.",
		p, err, t)
}

// scheduleSections builds the schedule's solve-rate-over-time section.
func scheduleSections(s *Schedule) ([]section, error) {
	if s == nil || len(s.Points) == 0 {
		return nil, nil
	}
	b := &sectionBuilder{prefix: "schedule-"}
	var order []string
	series := map[string]*timeSeries{}
	t := table{Header: []string{"time (UTC)", "evaluation", "model", "method", "solved", "rate", "95% interval", "change (points)", "p-value", "regression"}}
	for _, pt := range s.Points {
		name := pt.Model + "/" + pt.Method
		ts := series[name]
		if ts == nil {
			ts = &timeSeries{name: name}
			series[name] = ts
			order = append(order, name)
		}
		xy := plotter.XY{X: unixSeconds(pt.Time), Y: float64(pt.Rate.Permille) / 10}
		ts.pts = append(ts.pts, xy)
		reg := ""
		if pt.Regression {
			ts.marked = append(ts.marked, xy)
			reg = "yes"
		}
		solved := "-"
		if pt.Rate.Total > 0 {
			solved = fraction(pt.Rate.Solved, pt.Rate.Total)
		}
		t.Rows = append(t.Rows, []string{pt.Time.UTC().Format("2006-01-02 15:04:05"), pt.Evaluation, pt.Model, pt.Method,
			solved, dashIfEmpty(pt.Rate.Percent), dashIfEmpty(pt.Rate.Interval), dashIfEmpty(pt.Change), dashIfEmpty(pt.PValue), dashIfEmpty(reg)})
	}
	var list []timeSeries
	for _, n := range order {
		list = append(list, *series[n])
	}
	p, err := timeChart("Solve rate over time: "+s.Name, "success rate (%)", list)
	b.add("history", "Solve rate over time",
		"One line per model and method across the evaluations the schedule started; red crosses mark the results the schedule flagged as regressions.",
		p, err, t)
	return b.out, b.err
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
