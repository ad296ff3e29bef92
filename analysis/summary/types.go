package summary

// Summary is the aggregate of a set of records. It holds no floats and no
// maps: counts are integers, rates are per-mille integers plus formatted
// strings, and every list has a fixed order, so that the same records always
// marshal to the same bytes.
type Summary struct {
	// Records is the number of distinct runs (after removing duplicate keys).
	Records int `json:"records"`
	// Duplicates is the number of finished (non-infra) records dropped
	// because their key was already present. Infra-error records replaced by
	// a later finished run of the same key (what a resume does) are not
	// counted: they are history, not duplicates.
	Duplicates int `json:"duplicates"`
	// Models are sorted by name.
	Models []ModelSummary `json:"models"`
	// Derail holds the Derail-550 figures (schema-2 records), one entry per
	// model and checkpoint statement, sorted; those records are not part of
	// Models.
	Derail []DerailModelSummary `json:"derail,omitempty"`
}

// ModelSummary holds the figures of one model.
type ModelSummary struct {
	Model string `json:"model"`
	// Problems is the number of distinct problem ids with any record.
	Problems int `json:"problems"`
	// Methods are in the canonical method order (pot, pot-retry, repot,
	// repot-adaptive, repot-no-prefix, repot-restart), then others by name.
	Methods []MethodSummary `json:"methods"`
	// Comparisons holds one entry per pair of methods, the later method in
	// method order against the earlier one (its baseline).
	Comparisons []Comparison `json:"comparisons"`
}

// Rate is solved out of total with its 95% Wilson score interval.
type Rate struct {
	Solved int `json:"solved"`
	Total  int `json:"total"`
	// Permille is solved/total in thousandths, rounded half up (0 when total is 0).
	Permille int `json:"permille"`
	// Percent is the rate formatted with one decimal, such as "62.5%".
	Percent string `json:"percent"`
	// LowPermille and HighPermille bound the 95% Wilson interval.
	LowPermille  int `json:"low_permille"`
	HighPermille int `json:"high_permille"`
	// Interval is the interval formatted, such as "[53.6%, 70.6%]".
	Interval string `json:"interval"`
}

// Tokens are token sums. Cached and reasoning tokens are parts of the prompt
// and completion tokens respectively, as servers report them.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Cached     int64 `json:"cached"`
	Reasoning  int64 `json:"reasoning"`
}

// RouteCount is one route of a method: how many runs took it and how many of
// those were solved.
type RouteCount struct {
	Route  string `json:"route"`
	Count  int    `json:"count"`
	Solved int    `json:"solved"`
	// RescuePercent is solved/count formatted ("" when count is 0).
	RescuePercent string `json:"rescue_percent"`
}

// MethodSummary holds the figures of one method of one model. Records that
// ended in an infrastructure error are counted in InfraErrors only and are
// left out of every other figure.
type MethodSummary struct {
	Method string `json:"method"`
	Rate
	// Routes lists the routes the method can take (always, even with count
	// 0), then any other route seen; the counts add up to Total.
	Routes []RouteCount `json:"routes"`

	Calls int64 `json:"calls"`
	// CallsPerProblemMilli is calls per problem in thousandths;
	// CallsPerProblem formats it with two decimals ("1.23").
	CallsPerProblemMilli int64  `json:"calls_per_problem_milli"`
	CallsPerProblem      string `json:"calls_per_problem"`
	RepairsUsed          int    `json:"repairs_used"`

	Tokens Tokens `json:"tokens"`
	// TokensPerProblem is Tokens divided by Total, rounded half up.
	TokensPerProblem Tokens `json:"tokens_per_problem"`

	// CostVsPot compares this method's prompt+completion tokens with pot's
	// on the problems both ran (without infra errors): per-mille of pot's
	// tokens, and formatted as "1.62x". Zero and "" when pot has no such
	// problems.
	CostVsPotProblems int    `json:"cost_vs_pot_problems"`
	CostVsPotPermille int64  `json:"cost_vs_pot_permille"`
	CostVsPot         string `json:"cost_vs_pot"`

	// FailedFirstPlans counts runs whose first plan did not solve the
	// problem; FailedPrefixPermille is the mean verified prefix fraction of
	// those first plans (empty plans count as 0).
	FailedFirstPlans     int    `json:"failed_first_plans"`
	FailedPrefixPermille int    `json:"failed_prefix_permille"`
	FailedPrefix         string `json:"failed_prefix"`

	// StopReasons counts the runs by stopped_reason, sorted by reason.
	StopReasons []ReasonCount `json:"stop_reasons"`

	// InfraErrors counts runs an infrastructure failure ended; InfraRetries
	// sums the retries of every run, including those that succeeded.
	InfraErrors  int   `json:"infra_errors"`
	InfraRetries int64 `json:"infra_retries"`

	// ByEnvironment and ByComplexity break the rate down, sorted by
	// environment then complexity.
	ByEnvironment []Cell `json:"by_environment"`
	ByComplexity  []Cell `json:"by_complexity"`

	// Rounds are the repair dynamics round by round (RoundSummary), from
	// the runs that record rounds; absent when none does.
	Rounds []RoundSummary `json:"rounds,omitempty"`
	// LoopStops counts those runs by why their repair loop stopped.
	LoopStops []ReasonCount `json:"loop_stops,omitempty"`
}

// ReasonCount is how many runs stopped for one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Cell is the figures of one method on one environment (Complexity 0) or on
// one (environment, complexity).
type Cell struct {
	Environment string `json:"environment"`
	Complexity  int    `json:"complexity,omitempty"`
	Rate
	CallsPerProblemMilli int64  `json:"calls_per_problem_milli"`
	CallsPerProblem      string `json:"calls_per_problem"`
	FailedFirstPlans     int    `json:"failed_first_plans"`
	FailedPrefixPermille int    `json:"failed_prefix_permille"`
	InfraErrors          int    `json:"infra_errors"`
}

// Comparison is a paired comparison of two methods on the problems both
// finished without an infrastructure error.
type Comparison struct {
	Method   string `json:"method"`
	Baseline string `json:"baseline"`
	Problems int    `json:"problems"`

	MethodSolved   int `json:"method_solved"`
	BaselineSolved int `json:"baseline_solved"`
	// MethodOnly counts problems only Method solved; BaselineOnly those only
	// Baseline solved (the discordant pairs of McNemar's test).
	MethodOnly   int `json:"method_only"`
	BaselineOnly int `json:"baseline_only"`

	// DiffPermille is (MethodSolved-BaselineSolved)/Problems in thousandths
	// (tenths of a point), rounded half away from zero; DiffPoints formats it
	// as points with a sign ("+5.8").
	DiffPermille int    `json:"diff_permille"`
	DiffPoints   string `json:"diff_points"`
	// Test is "mcnemar-exact" (two-sided binomial on the discordant pairs)
	// or "mcnemar-chi2" (continuity-corrected, for very many discordant
	// pairs); PValue is formatted with four decimals ("0.0313", "<0.0001").
	Test   string `json:"test"`
	PValue string `json:"p_value"`
}
