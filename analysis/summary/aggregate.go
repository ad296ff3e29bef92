package summary

import (
	"sort"

	"repot.dev/repot-operator/contract"
)

// routeOrder orders routes that a method does not list by default.
var routeOrder = []string{contract.RouteInitialSuccess, contract.RouteFreshEmptyPlan, contract.RouteFreshShortPrefix, contract.RouteSuffixRepair, contract.RouteFreshRetry, contract.RouteNoExtraCall}

// Dedupe returns the records with each key once, in input order. When a key
// appears more than once the first record that is not an infra error wins
// (an infra error is replaced by a later finished run of the same key);
// otherwise the first occurrence wins. It also returns how many finished
// (non-infra) records were dropped; dropped infra records are not counted.
// Aborted attempts (contract.Record.Aborted) are no runs: they are left
// out, and not counted as dropped (Spent counts their spending).
func Dedupe(records []contract.Record) ([]contract.Record, int) {
	idx := make(map[string]int, len(records))
	out := make([]contract.Record, 0, len(records))
	dropped := 0
	for _, r := range records {
		if r.Aborted {
			continue
		}
		i, ok := idx[r.Key()]
		if !ok {
			idx[r.Key()] = len(out)
			out = append(out, r)
			continue
		}
		if contract.Supersedes(out[i], r) {
			out[i] = r
			continue
		}
		if r.InfraError == "" {
			dropped++
		}
	}
	return out, dropped
}

// Spending is the completion tokens and model calls of records.
type Spending struct {
	CompletionTokens int64
	Calls            int64
}

// Spent sums, per model, the completion tokens and model calls the server
// reported for records: those of the runs Dedupe keeps, and those of each
// aborted attempt (by its key, once) on top, since a run aborted and made
// again spent twice. It is what a budget counts.
func Spent(records []contract.Record) map[string]Spending {
	out := map[string]Spending{}
	add := func(r *contract.Record) {
		s := out[r.Model]
		s.CompletionTokens += int64(r.CompletionTokens)
		s.Calls += int64(r.Calls)
		out[r.Model] = s
	}
	runs, _ := Dedupe(records)
	for i := range runs {
		add(&runs[i])
	}
	seen := map[string]bool{}
	for i := range records {
		if r := &records[i]; r.Aborted && !seen[r.Key()] {
			seen[r.Key()] = true
			add(r)
		}
	}
	return out
}

// Aggregate turns records into a Summary. It is deterministic: the same
// records always give the same Summary, and the order of the input matters
// only through which of two records with the same key Dedupe keeps.
func Aggregate(records []contract.Record) Summary {
	recs, dropped := Dedupe(records)
	s := Summary{Records: len(recs), Duplicates: dropped, Models: []ModelSummary{}}
	byModel := map[string][]contract.Record{}
	var derail []contract.Record
	for _, r := range recs {
		if isDerail(r) {
			derail = append(derail, r)
			continue
		}
		byModel[r.Model] = append(byModel[r.Model], r)
	}
	if len(derail) > 0 {
		s.Derail = aggregateDerail(derail)
	}
	for _, m := range sortedKeys(byModel) {
		s.Models = append(s.Models, aggregateModel(m, byModel[m]))
	}
	return s
}

func aggregateModel(model string, recs []contract.Record) ModelSummary {
	ms := ModelSummary{Model: model, Methods: []MethodSummary{}, Comparisons: []Comparison{}}
	var byMethod map[string][]contract.Record
	ms.Problems, byMethod = byMethodOf(recs)
	methods := orderedNames(sortedKeys(byMethod), contract.Methods)
	finished := finishedRuns(methods, byMethod)
	for _, m := range methods {
		ms.Methods = append(ms.Methods, aggregateMethod(m, byMethod[m], finished[contract.MethodPoT]))
	}
	for j := range methods {
		for i := 0; i < j; i++ {
			ms.Comparisons = append(ms.Comparisons, compare(methods[j], methods[i], finished[methods[j]], finished[methods[i]]))
		}
	}
	return ms
}

// aggregateMethod computes one method's figures; pot holds pot's finished
// runs of the same model by problem id.
func aggregateMethod(method string, recs []contract.Record, pot map[string]contract.Record) MethodSummary {
	m := MethodSummary{Method: method}
	var done []contract.Record
	for _, r := range recs {
		m.InfraRetries += int64(r.InfraRetries)
		if r.InfraError != "" {
			m.InfraErrors++
			continue
		}
		done = append(done, r)
	}
	st := tally(done)
	m.Rate = newRate(st.solved, len(done))
	m.Calls = st.calls
	m.CallsPerProblemMilli, m.CallsPerProblem = st.callsPerProblem(len(done))
	m.FailedFirstPlans, m.FailedPrefixPermille = st.failedFirst, st.failedPrefixPermille()
	m.FailedPrefix = "n/a"
	if st.failedFirst > 0 {
		m.FailedPrefix = formatPermillePercent(int64(m.FailedPrefixPermille))
	}
	m.Routes = routes(method, done)
	reasons := map[string]int{}
	for _, r := range done {
		if r.RepairUsed {
			m.RepairsUsed++
		}
		m.Tokens.Prompt += int64(r.PromptTokens)
		m.Tokens.Completion += int64(r.CompletionTokens)
		m.Tokens.Cached += int64(r.CachedTokens)
		m.Tokens.Reasoning += int64(r.ReasoningTokens)
		reasons[r.StoppedReason]++
	}
	n := int64(len(done))
	m.TokensPerProblem = Tokens{
		Prompt:     roundDiv(m.Tokens.Prompt, n),
		Completion: roundDiv(m.Tokens.Completion, n),
		Cached:     roundDiv(m.Tokens.Cached, n),
		Reasoning:  roundDiv(m.Tokens.Reasoning, n),
	}
	m.StopReasons = []ReasonCount{}
	for _, k := range sortedKeys(reasons) {
		m.StopReasons = append(m.StopReasons, ReasonCount{Reason: k, Count: reasons[k]})
	}
	var own, base int64
	for _, r := range done {
		p, ok := pot[r.ProblemID]
		if !ok {
			continue
		}
		m.CostVsPotProblems++
		own += int64(r.PromptTokens + r.CompletionTokens)
		base += int64(p.PromptTokens + p.CompletionTokens)
	}
	if base > 0 {
		m.CostVsPotPermille = roundDiv(1000*own, base)
		m.CostVsPot = formatMilli(m.CostVsPotPermille) + "x"
	}
	m.ByEnvironment, m.ByComplexity = cells(recs)
	m.Rounds, m.LoopStops = Rounds(done)
	return m
}

// stats are the sums shared by methods and cells.
type stats struct {
	solved          int
	calls           int64
	failedFirst     int
	failedPrefixSum int64
}

// tally sums the finished records of a method or cell.
func tally(done []contract.Record) stats {
	var st stats
	for _, r := range done {
		if r.Success {
			st.solved++
		}
		st.calls += int64(r.Calls)
		if !r.InitialSuccess {
			st.failedFirst++
			st.failedPrefixSum += int64(r.InitialPrefixPermille)
		}
	}
	return st
}

// callsPerProblem is calls per problem over n problems in thousandths, and
// formatted with two decimals.
func (st stats) callsPerProblem(n int) (int64, string) {
	milli := roundDiv(1000*st.calls, int64(n))
	return milli, formatMilli(milli)
}

// failedPrefixPermille is the mean verified prefix fraction of the failed
// first plans, in thousandths (0 when there are none).
func (st stats) failedPrefixPermille() int {
	return int(roundDiv(st.failedPrefixSum, int64(st.failedFirst)))
}

// routes counts the finished runs by route: the method's own routes first,
// then others in route order, then by name.
func routes(method string, done []contract.Record) []RouteCount {
	count := map[string]*RouteCount{}
	for _, r := range done {
		rc := count[r.Route]
		if rc == nil {
			rc = &RouteCount{Route: r.Route}
			count[r.Route] = rc
		}
		rc.Count++
		if r.Success {
			rc.Solved++
		}
	}
	// The method's routes (contract.MethodSpecs), always shown.
	spec, _ := contract.LookupMethod(method)
	names := append([]string{}, spec.Routes...)
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
	}
	var extra []string
	for k := range count {
		if !listed[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	names = append(names, orderedNames(extra, routeOrder)...)
	out := make([]RouteCount, 0, len(names))
	for _, n := range names {
		rc := RouteCount{Route: n}
		if c := count[n]; c != nil {
			rc = *c
		}
		if rc.Count > 0 {
			rc.RescuePercent = formatPermillePercent(roundDiv(1000*int64(rc.Solved), int64(rc.Count)))
		}
		out = append(out, rc)
	}
	return out
}

// cellKey identifies a breakdown cell.
type cellKey struct {
	env        string
	complexity int
}

// cells breaks one method's records down by environment and by (environment,
// complexity), each sorted.
func cells(recs []contract.Record) (byEnv, byComplexity []Cell) {
	envs := map[cellKey][]contract.Record{}
	levels := map[cellKey][]contract.Record{}
	for _, r := range recs {
		envs[cellKey{r.Environment, 0}] = append(envs[cellKey{r.Environment, 0}], r)
		levels[cellKey{r.Environment, r.Complexity}] = append(levels[cellKey{r.Environment, r.Complexity}], r)
	}
	return cellList(envs), cellList(levels)
}

func cellList(groups map[cellKey][]contract.Record) []Cell {
	keys := make([]cellKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].env != keys[j].env {
			return keys[i].env < keys[j].env
		}
		return keys[i].complexity < keys[j].complexity
	})
	out := make([]Cell, 0, len(keys))
	for _, k := range keys {
		out = append(out, cell(k, groups[k]))
	}
	return out
}

func cell(k cellKey, recs []contract.Record) Cell {
	c := Cell{Environment: k.env, Complexity: k.complexity}
	var done []contract.Record
	for _, r := range recs {
		if r.InfraError != "" {
			c.InfraErrors++
			continue
		}
		done = append(done, r)
	}
	st := tally(done)
	c.Rate = newRate(st.solved, len(done))
	c.CallsPerProblemMilli, c.CallsPerProblem = st.callsPerProblem(len(done))
	c.FailedFirstPlans, c.FailedPrefixPermille = st.failedFirst, st.failedPrefixPermille()
	return c
}

// compare pairs method against baseline on the problems both finished.
func compare(method, baseline string, m, b map[string]contract.Record) Comparison {
	c := Comparison{Method: method, Baseline: baseline}
	for id, rm := range m {
		rb, ok := b[id]
		if !ok {
			continue
		}
		c.Problems++
		if rm.Success {
			c.MethodSolved++
		}
		if rb.Success {
			c.BaselineSolved++
		}
		switch {
		case rm.Success && !rb.Success:
			c.MethodOnly++
		case rb.Success && !rm.Success:
			c.BaselineOnly++
		}
	}
	c.DiffPermille = int(roundDiv(1000*int64(c.MethodSolved-c.BaselineSolved), int64(c.Problems)))
	c.DiffPoints = formatSignedTenths(int64(c.DiffPermille))
	c.Test, c.PValue = mcnemar(c.MethodOnly, c.BaselineOnly)
	return c
}

// orderedNames sorts names: those in order first, in that order, then the
// rest as given.
func orderedNames(names []string, order []string) []string {
	rank := map[string]int{}
	for i, n := range order {
		rank[n] = i
	}
	out := append([]string{}, names...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, oki := rank[out[i]]
		rj, okj := rank[out[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		default:
			return false
		}
	})
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// byMethodOf groups records by method (a Derail condition is a method) and
// counts the distinct problems among them.
func byMethodOf(recs []contract.Record) (int, map[string][]contract.Record) {
	problems := map[string]bool{}
	by := map[string][]contract.Record{}
	for _, r := range recs {
		problems[r.ProblemID] = true
		by[r.Method] = append(by[r.Method], r)
	}
	return len(problems), by
}

// finishedRuns gives, for each of names, its runs that ended without an
// infrastructure error, by problem: finished[method][problem].
func finishedRuns(names []string, by map[string][]contract.Record) map[string]map[string]contract.Record {
	finished := map[string]map[string]contract.Record{}
	for _, m := range names {
		finished[m] = map[string]contract.Record{}
		for _, r := range by[m] {
			if r.InfraError == "" {
				finished[m][r.ProblemID] = r
			}
		}
	}
	return finished
}
