package contract

import "slices"

// MethodLoop says how a method's run begins.
type MethodLoop string

const (
	// LoopPoT methods begin with one Program-of-Thought call and its
	// verified replay; what they do after a failed plan is theirs.
	LoopPoT MethodLoop = "pot"
	// LoopOwn methods run their own calls from the start (cot,
	// self-consistency, vex).
	LoopOwn MethodLoop = "own"
)

// MethodSpec is what the engine, the summary, the judge and the API know
// of one method, stated once. The engine registers each method's behaviour
// under its Name (runner/methods), the summary shows its Routes, the judge
// reads NotJudged, and the API's spec.methods enum is checked against
// Methods (api/v1alpha1's contract test).
type MethodSpec struct {
	// Name is Record.Method, `repot run --methods` and spec.methods.
	Name string
	// Loop says how a run begins.
	Loop MethodLoop
	// Routes are the routes a run can take, in summary order: summaries
	// always show them, with zero counts where no run took them.
	Routes []string
	// RepairLoop says the method repairs in the RePoT loop (its repair
	// budget and the VRR settings apply; see the engine for when a run
	// records its rounds).
	RepairLoop bool
	// NotJudged says why `repot judge` does not re-judge the method's
	// traces; "" when it does.
	NotJudged string
}

// MethodSpecs are the methods in summary order.
var MethodSpecs = []MethodSpec{
	{Name: MethodPoT, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteNoExtraCall}},
	{Name: MethodPoTRetry, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteFreshRetry}},
	{Name: MethodRePoT, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteSuffixRepair}, RepairLoop: true},
	{Name: MethodAdaptive, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteFreshEmptyPlan, RouteFreshShortPrefix, RouteSuffixRepair}},
	{Name: MethodRePoTNoPrefix, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteSuffixRepair}, RepairLoop: true},
	{Name: MethodRePoTRestart, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteSuffixRepair}, RepairLoop: true},
	{Name: MethodVRR, Loop: LoopPoT, Routes: []string{RouteInitialSuccess, RouteSuffixRepair}, RepairLoop: true,
		NotJudged: "repot-vrr's loop may keep an earlier plan (VRR-Guard) or repair a plan on votes and estimates the trace does not hold"},
	// cot makes one call; self-consistency draws more samples after a
	// failed first one; vex solved with its first chunk or went on.
	{Name: MethodCoT, Loop: LoopOwn, Routes: []string{RouteInitialSuccess, RouteNoExtraCall}},
	{Name: MethodSelfConsistency, Loop: LoopOwn, Routes: []string{RouteInitialSuccess, RouteFreshRetry}},
	{Name: MethodVEX, Loop: LoopOwn, Routes: []string{RouteInitialSuccess, RouteNoExtraCall},
		NotJudged: "vex commits each chunk's moves through the run's per-state tabu list and cuts a JSON proposal to the chunk size (spec.vex); rebuilding that is re-running the method's loop"},
}

// Methods lists every method the engine runs, in summary order (the names
// of MethodSpecs).
var Methods = methodNames(MethodSpecs)

func methodNames(specs []MethodSpec) []string {
	out := make([]string, len(specs))
	for i, m := range specs {
		out[i] = m.Name
	}
	return out
}

// LookupMethod returns the spec of the method name.
func LookupMethod(name string) (MethodSpec, bool) {
	i := slices.IndexFunc(MethodSpecs, func(m MethodSpec) bool { return m.Name == name })
	if i < 0 {
		return MethodSpec{}, false
	}
	return MethodSpecs[i], true
}

// ValidMethod reports whether name is a known method.
func ValidMethod(name string) bool {
	_, ok := LookupMethod(name)
	return ok
}
