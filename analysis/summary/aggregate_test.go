package summary

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

// rec builds a record of model "m".
func rec(problem, env string, complexity int, method string, success bool, route string, calls, prompt, completion int, initialSuccess bool, prefix int) contract.Record {
	reason := "invalid_move"
	if success {
		reason = "goal"
	}
	return contract.Record{
		Model: "m", ProblemID: problem, Environment: env, Complexity: complexity, Method: method,
		Success: success, StoppedReason: reason, Route: route, Calls: calls,
		PromptTokens: prompt, CompletionTokens: completion,
		InitialSuccess: initialSuccess, InitialPrefixPermille: prefix,
		RepairUsed: route == contract.RouteSuffixRepair,
	}
}

func fixture() []contract.Record {
	return []contract.Record{
		// pot: p1 solved, p2 failed (prefix 500), p3 failed (prefix 0), p4 infra error.
		rec("p1", "hanoi", 3, contract.MethodPoT, true, contract.RouteInitialSuccess, 1, 100, 50, true, 1000),
		rec("p2", "hanoi", 4, contract.MethodPoT, false, contract.RouteNoExtraCall, 1, 100, 50, false, 500),
		rec("p3", "river", 1, contract.MethodPoT, false, contract.RouteNoExtraCall, 1, 100, 50, false, 0),
		{Model: "m", ProblemID: "p4", Environment: "river", Complexity: 2, Method: contract.MethodPoT, StoppedReason: "infra_error", InfraError: "connection reset", InfraRetries: 3},
		// adaptive: p1 initial, p2 suffix repair solved, p3 fresh short prefix failed, p4 initial solved.
		rec("p1", "hanoi", 3, contract.MethodAdaptive, true, contract.RouteInitialSuccess, 1, 100, 50, true, 1000),
		rec("p2", "hanoi", 4, contract.MethodAdaptive, true, contract.RouteSuffixRepair, 2, 250, 60, false, 500),
		rec("p3", "river", 1, contract.MethodAdaptive, false, contract.RouteFreshShortPrefix, 2, 200, 100, false, 0),
		rec("p4", "river", 2, contract.MethodAdaptive, true, contract.RouteInitialSuccess, 1, 100, 50, true, 1000),
		// Duplicates: p1/adaptive again, and an infra record for p2/adaptive
		// (a finished run of the key exists, so both are dropped).
		rec("p1", "hanoi", 3, contract.MethodAdaptive, false, contract.RouteNoExtraCall, 1, 1, 1, false, 0),
		{Model: "m", ProblemID: "p2", Environment: "hanoi", Complexity: 4, Method: contract.MethodAdaptive, StoppedReason: "infra_error", InfraError: "x", InfraRetries: 2},
	}
}

func TestAggregate(t *testing.T) {
	got := Aggregate(fixture())
	want := Summary{
		Records:    8,
		Duplicates: 1,
		Models: []ModelSummary{{
			Model:    "m",
			Problems: 4,
			Methods: []MethodSummary{
				{
					Method: contract.MethodPoT,
					Rate:   Rate{Solved: 1, Total: 3, Permille: 333, Percent: "33.3%", LowPermille: 61, HighPermille: 792, Interval: "[6.1%, 79.2%]"},
					Routes: []RouteCount{
						{Route: contract.RouteInitialSuccess, Count: 1, Solved: 1, RescuePercent: "100.0%"},
						{Route: contract.RouteNoExtraCall, Count: 2, Solved: 0, RescuePercent: "0.0%"},
					},
					Calls: 3, CallsPerProblemMilli: 1000, CallsPerProblem: "1.00",
					Tokens:            Tokens{Prompt: 300, Completion: 150},
					TokensPerProblem:  Tokens{Prompt: 100, Completion: 50},
					CostVsPotProblems: 3, CostVsPotPermille: 1000, CostVsPot: "1.00x",
					FailedFirstPlans: 2, FailedPrefixPermille: 250, FailedPrefix: "25.0%",
					StopReasons:  []ReasonCount{{Reason: "goal", Count: 1}, {Reason: "invalid_move", Count: 2}},
					InfraErrors:  1,
					InfraRetries: 3,
					ByEnvironment: []Cell{
						{Environment: "hanoi", Rate: newRate(1, 2), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00", FailedFirstPlans: 1, FailedPrefixPermille: 500},
						{Environment: "river", Rate: newRate(0, 1), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00", FailedFirstPlans: 1, FailedPrefixPermille: 0, InfraErrors: 1},
					},
					ByComplexity: []Cell{
						{Environment: "hanoi", Complexity: 3, Rate: newRate(1, 1), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00"},
						{Environment: "hanoi", Complexity: 4, Rate: newRate(0, 1), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00", FailedFirstPlans: 1, FailedPrefixPermille: 500},
						{Environment: "river", Complexity: 1, Rate: newRate(0, 1), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00", FailedFirstPlans: 1},
						{Environment: "river", Complexity: 2, Rate: newRate(0, 0), InfraErrors: 1, CallsPerProblem: "0.00"},
					},
				},
				{
					Method: contract.MethodAdaptive,
					Rate:   Rate{Solved: 3, Total: 4, Permille: 750, Percent: "75.0%", LowPermille: 301, HighPermille: 954, Interval: "[30.1%, 95.4%]"},
					Routes: []RouteCount{
						{Route: contract.RouteInitialSuccess, Count: 2, Solved: 2, RescuePercent: "100.0%"},
						{Route: contract.RouteFreshEmptyPlan},
						{Route: contract.RouteFreshShortPrefix, Count: 1, Solved: 0, RescuePercent: "0.0%"},
						{Route: contract.RouteSuffixRepair, Count: 1, Solved: 1, RescuePercent: "100.0%"},
					},
					Calls: 6, CallsPerProblemMilli: 1500, CallsPerProblem: "1.50",
					RepairsUsed: 1,
					Tokens:      Tokens{Prompt: 650, Completion: 260},
					// 162.5 -> 163, 65
					TokensPerProblem: Tokens{Prompt: 163, Completion: 65},
					// on p1..p3: (150+310+300)/(450) = 760/450
					CostVsPotProblems: 3, CostVsPotPermille: 1689, CostVsPot: "1.69x",
					FailedFirstPlans: 2, FailedPrefixPermille: 250, FailedPrefix: "25.0%",
					StopReasons: []ReasonCount{{Reason: "goal", Count: 3}, {Reason: "invalid_move", Count: 1}},
					ByEnvironment: []Cell{
						{Environment: "hanoi", Rate: newRate(2, 2), CallsPerProblemMilli: 1500, CallsPerProblem: "1.50", FailedFirstPlans: 1, FailedPrefixPermille: 500},
						{Environment: "river", Rate: newRate(1, 2), CallsPerProblemMilli: 1500, CallsPerProblem: "1.50", FailedFirstPlans: 1},
					},
					ByComplexity: []Cell{
						{Environment: "hanoi", Complexity: 3, Rate: newRate(1, 1), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00"},
						{Environment: "hanoi", Complexity: 4, Rate: newRate(1, 1), CallsPerProblemMilli: 2000, CallsPerProblem: "2.00", FailedFirstPlans: 1, FailedPrefixPermille: 500},
						{Environment: "river", Complexity: 1, Rate: newRate(0, 1), CallsPerProblemMilli: 2000, CallsPerProblem: "2.00", FailedFirstPlans: 1},
						{Environment: "river", Complexity: 2, Rate: newRate(1, 1), CallsPerProblemMilli: 1000, CallsPerProblem: "1.00"},
					},
				},
			},
			Comparisons: []Comparison{{
				Method: contract.MethodAdaptive, Baseline: contract.MethodPoT, Problems: 3,
				MethodSolved: 2, BaselineSolved: 1, MethodOnly: 1, BaselineOnly: 0,
				DiffPermille: 333, DiffPoints: "+33.3", Test: "mcnemar-exact", PValue: "1.0000",
			}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Aggregate mismatch (-want +got):\n%s", diff)
	}
}

func TestAggregateOrderIndependent(t *testing.T) {
	// Without duplicate keys the input order must not matter at all.
	recs := fixture()[:8]
	want, err := json.Marshal(Aggregate(recs))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		shuffled := append([]contract.Record{}, recs...)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got, err := json.Marshal(Aggregate(shuffled))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("shuffle %d changed the summary:\n%s\nvs\n%s", i, got, want)
		}
	}
}

func TestDedupe(t *testing.T) {
	ok := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, Success: true}
	okLater := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, Success: false}
	infra := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, InfraError: "boom"}
	infra2 := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, InfraError: "again"}
	other := contract.Record{Model: "m2", ProblemID: "p", Method: contract.MethodPoT}
	aborted := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, Aborted: true, StartedUnixMilli: 5, Calls: 1, CompletionTokens: 9}
	tests := []struct {
		name    string
		in      []contract.Record
		want    []contract.Record
		dropped int
	}{
		{"empty", nil, []contract.Record{}, 0},
		{"distinct models", []contract.Record{ok, other}, []contract.Record{ok, other}, 0},
		{"first finished wins", []contract.Record{ok, okLater}, []contract.Record{ok}, 1},
		{"finished replaces infra", []contract.Record{infra, ok}, []contract.Record{ok}, 0},
		{"infra does not replace finished", []contract.Record{ok, infra}, []contract.Record{ok}, 0},
		{"first infra kept", []contract.Record{infra, infra2}, []contract.Record{infra}, 0},
		{"position kept", []contract.Record{infra, other, ok}, []contract.Record{ok, other}, 0},
		{"resume history", []contract.Record{infra, infra2, ok, okLater}, []contract.Record{ok}, 1},
		{"aborted attempts left out", []contract.Record{aborted, ok, aborted}, []contract.Record{ok}, 0},
	}
	for _, tc := range tests {
		got, dropped := Dedupe(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" || dropped != tc.dropped {
			t.Errorf("%s: dropped %d want %d; diff (-want +got):\n%s", tc.name, dropped, tc.dropped, diff)
		}
	}
}

// Aborted attempts change no figure of the summary.
func TestAggregateIgnoresAborted(t *testing.T) {
	in := append(fixture(),
		contract.Record{Model: "m", ProblemID: "p9", Environment: "river", Complexity: 2, Method: contract.MethodPoT, Aborted: true, StartedUnixMilli: 7, Calls: 1, CompletionTokens: 400},
		contract.Record{Model: "m", ProblemID: "p1", Environment: "hanoi", Complexity: 3, Method: contract.MethodPoT, Aborted: true, StartedUnixMilli: 8, Calls: 2, CompletionTokens: 300})
	if d := cmp.Diff(Aggregate(fixture()), Aggregate(in)); d != "" {
		t.Errorf("aborted attempts changed the summary (-without +with):\n%s", d)
	}
}

// Spent counts the runs Dedupe keeps and each aborted attempt once.
func TestSpent(t *testing.T) {
	run := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, Calls: 2, CompletionTokens: 100}
	dup := run
	dup.Calls, dup.CompletionTokens = 9, 999
	a1 := contract.Record{Model: "m", ProblemID: "p", Method: contract.MethodPoT, Aborted: true, StartedUnixMilli: 1, Calls: 1, CompletionTokens: 40}
	a2 := a1
	a2.StartedUnixMilli = 2
	other := contract.Record{Model: "m2", ProblemID: "p", Method: contract.MethodPoT, Aborted: true, StartedUnixMilli: 1, Calls: 3, CompletionTokens: 7}
	for _, tc := range []struct {
		name string
		in   []contract.Record
		want map[string]Spending
	}{
		{"none", nil, map[string]Spending{}},
		{"runs once", []contract.Record{run, dup}, map[string]Spending{"m": {CompletionTokens: 100, Calls: 2}}},
		{"aborted attempts on top of the run", []contract.Record{a1, run, a2}, map[string]Spending{"m": {CompletionTokens: 180, Calls: 4}}},
		{"an attempt read twice counts once", []contract.Record{a1, a1}, map[string]Spending{"m": {CompletionTokens: 40, Calls: 1}}},
		{"per model", []contract.Record{run, other}, map[string]Spending{"m": {CompletionTokens: 100, Calls: 2}, "m2": {CompletionTokens: 7, Calls: 3}}},
	} {
		if d := cmp.Diff(tc.want, Spent(tc.in)); d != "" {
			t.Errorf("%s: Spent (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestAggregateEmpty(t *testing.T) {
	got := Aggregate(nil)
	want := Summary{Models: []ModelSummary{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestAggregateMethodOrderAndModels(t *testing.T) {
	var recs []contract.Record
	for _, m := range []string{"zeta", contract.MethodRePoTRestart, contract.MethodAdaptive, contract.MethodPoTRetry, "alpha", contract.MethodPoT, contract.MethodRePoT, contract.MethodRePoTNoPrefix} {
		for _, model := range []string{"b", "a"} {
			recs = append(recs, contract.Record{Model: model, ProblemID: "p", Environment: "e", Complexity: 1, Method: m, Route: contract.RouteInitialSuccess, Success: true, InitialSuccess: true, Calls: 1})
		}
	}
	s := Aggregate(recs)
	var models []string
	for _, m := range s.Models {
		models = append(models, m.Model)
	}
	if diff := cmp.Diff([]string{"a", "b"}, models); diff != "" {
		t.Errorf("model order (-want +got):\n%s", diff)
	}
	var methods []string
	for _, m := range s.Models[0].Methods {
		methods = append(methods, m.Method)
	}
	wantMethods := []string{contract.MethodPoT, contract.MethodPoTRetry, contract.MethodRePoT, contract.MethodAdaptive, contract.MethodRePoTNoPrefix, contract.MethodRePoTRestart, "alpha", "zeta"}
	if diff := cmp.Diff(wantMethods, methods); diff != "" {
		t.Errorf("method order (-want +got):\n%s", diff)
	}
	if got, want := len(s.Models[0].Comparisons), 8*7/2; got != want {
		t.Errorf("comparisons = %d, want %d", got, want)
	}
	if c := s.Models[0].Comparisons[0]; c.Method != contract.MethodPoTRetry || c.Baseline != contract.MethodPoT {
		t.Errorf("first comparison = %s vs %s, want pot-retry vs pot", c.Method, c.Baseline)
	}
}

func TestRoutesAddUp(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	routesAll := []string{contract.RouteInitialSuccess, contract.RouteFreshEmptyPlan, contract.RouteFreshShortPrefix, contract.RouteSuffixRepair, "weird"}
	var recs []contract.Record
	for i := 0; i < 200; i++ {
		r := contract.Record{Model: "m", ProblemID: string(rune('A'+i%26)) + string(rune('a'+i/26)), Environment: "e", Complexity: 1 + i%3, Method: contract.MethodAdaptive, Route: routesAll[rng.Intn(len(routesAll))], Success: rng.Intn(2) == 0}
		if rng.Intn(10) == 0 {
			r.InfraError = "x"
		}
		recs = append(recs, r)
	}
	m := Aggregate(recs).Models[0].Methods[0]
	sum := 0
	for _, r := range m.Routes {
		sum += r.Count
	}
	if sum != m.Total {
		t.Errorf("routes add up to %d, want %d", sum, m.Total)
	}
	if m.Total+m.InfraErrors != 200 {
		t.Errorf("total %d + infra %d != 200", m.Total, m.InfraErrors)
	}
	if last := m.Routes[len(m.Routes)-1].Route; last != "weird" {
		t.Errorf("unknown route listed last: got %q", last)
	}
}

// TestNoFloatsNoMaps walks the output types: the API must hold no floats
// and no maps.
func TestNoFloatsNoMaps(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
			t.Errorf("%s is a float", path)
		case reflect.Map, reflect.Interface:
			t.Errorf("%s is a %s", path, typ.Kind())
		case reflect.Slice, reflect.Array, reflect.Pointer:
			walk(typ.Elem(), path+"[]")
		case reflect.Struct:
			for i := 0; i < typ.NumField(); i++ {
				walk(typ.Field(i).Type, path+"."+typ.Field(i).Name)
			}
		}
	}
	walk(reflect.TypeOf(Summary{}), "Summary")
	walk(reflect.TypeOf(ScalingReport{}), "ScalingReport")
	walk(reflect.TypeOf(contract.Record{}), "Record")
}
