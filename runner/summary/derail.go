package summary

import "sort"

// Derail-550 conditions: the record's Method of a Derail run (schema 2).
const (
	CondNoFeedback     = "no_feedback"
	CondErrorOnly      = "error_only"
	CondStateFeedback  = "state_feedback"
	CondStateLegal     = "state_plus_legal_actions"
	CondRePoTFull      = "repot-full"
	CondRePoTNoPrefix  = "repot-no-prefix"
	CondRePoTRestart   = "repot-restart"
	StatementPaper     = "paper"
	StatementFull      = "full"
	DerailSchema       = 2
	derailKeySeparator = "\x00derail/v2/"
)

// DerailConditions are the seven conditions in summary order: the four
// prompted ones, then the three RePoT ones.
var DerailConditions = []string{CondNoFeedback, CondErrorOnly, CondStateFeedback, CondStateLegal, CondRePoTFull, CondRePoTNoPrefix, CondRePoTRestart}

// PromptedConditions are the one-call conditions answered with a JSON move
// list.
var PromptedConditions = []string{CondNoFeedback, CondErrorOnly, CondStateFeedback, CondStateLegal}

// DerailStatements are the checkpoint statements of repot-full and
// repot-no-prefix: the paper's one sentence (default) or the full statement.
var DerailStatements = []string{StatementPaper, StatementFull}

// DerailRecord marks a record of the Derail-550 protocol of REPOT.md
// section 7 (schema 2). Records of the earlier reading (a repair straight
// from the injected trajectory, methods repot, repot-no-prefix and
// repot-restart) carry none: their key differs, and Aggregate keeps them
// out of the Derail figures.
type DerailRecord struct {
	// Schema is DerailSchema.
	Schema int `json:"schema"`
	// CheckpointStatement is "paper" or "full": how the checkpoint problem
	// of repot-full and repot-no-prefix was stated (recorded on every
	// condition's records so one run's records stay together).
	CheckpointStatement string `json:"checkpoint_statement"`
	// InjectionType is legal_wrong_action or invalid_action.
	InjectionType string `json:"injection_type"`
}

// DerailModelSummary is the Derail-550 figures of one model under one
// checkpoint statement.
type DerailModelSummary struct {
	Model               string `json:"model"`
	CheckpointStatement string `json:"checkpoint_statement"`
	// Cases is the number of distinct cases with any record.
	Cases int `json:"cases"`
	// Conditions are in DerailConditions order, then others by name.
	Conditions []ConditionSummary `json:"conditions"`
	// VsErrorOnly pairs every other condition with error_only on the cases
	// both finished (McNemar).
	VsErrorOnly []Comparison `json:"vs_error_only"`
}

// ConditionSummary is one condition's recovery figures. Infra-error runs
// are counted in InfraErrors only.
type ConditionSummary struct {
	Condition string `json:"condition"`
	// Rate is the recovery rate with its 95% Wilson interval.
	Rate
	Calls           int64         `json:"calls"`
	Tokens          Tokens        `json:"tokens"`
	TokensPerRun    Tokens        `json:"tokens_per_run"`
	StopReasons     []ReasonCount `json:"stop_reasons"`
	InfraErrors     int           `json:"infra_errors"`
	ByEnvironment   []Split       `json:"by_environment"`
	ByInjectionType []Split       `json:"by_injection_type"`
}

// Split is the recovery rate of one environment or injection type.
type Split struct {
	Name string `json:"name"`
	Rate
}

// isDerail reports whether r is a schema-2 Derail record.
func isDerail(r Record) bool { return r.Derail != nil && r.Derail.Schema == DerailSchema }

// aggregateDerail computes the Derail figures per (model, statement).
func aggregateDerail(recs []Record) []DerailModelSummary {
	type group struct{ model, statement string }
	groups := map[group][]Record{}
	var keys []group
	for _, r := range recs {
		g := group{r.Model, r.Derail.CheckpointStatement}
		if _, ok := groups[g]; !ok {
			keys = append(keys, g)
		}
		groups[g] = append(groups[g], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].model != keys[j].model {
			return keys[i].model < keys[j].model
		}
		return keys[i].statement < keys[j].statement
	})
	out := make([]DerailModelSummary, 0, len(keys))
	for _, g := range keys {
		out = append(out, derailModel(g.model, g.statement, groups[g]))
	}
	return out
}

func derailModel(model, statement string, recs []Record) DerailModelSummary {
	s := DerailModelSummary{Model: model, CheckpointStatement: statement, Conditions: []ConditionSummary{}, VsErrorOnly: []Comparison{}}
	var by map[string][]Record
	s.Cases, by = byMethodOf(recs)
	conds := orderedNames(sortedKeys(by), DerailConditions)
	finished := finishedRuns(conds, by)
	for _, c := range conds {
		s.Conditions = append(s.Conditions, conditionSummary(c, by[c]))
	}
	if base, ok := finished[CondErrorOnly]; ok {
		for _, c := range conds {
			if c != CondErrorOnly {
				s.VsErrorOnly = append(s.VsErrorOnly, compare(c, CondErrorOnly, finished[c], base))
			}
		}
	}
	return s
}

func conditionSummary(cond string, recs []Record) ConditionSummary {
	c := ConditionSummary{Condition: cond, StopReasons: []ReasonCount{}}
	var done []Record
	for _, r := range recs {
		if r.InfraError != "" {
			c.InfraErrors++
			continue
		}
		done = append(done, r)
	}
	solved := 0
	reasons := map[string]int{}
	envs, types := map[string][2]int{}, map[string][2]int{}
	for _, r := range done {
		if r.Success {
			solved++
		}
		c.Calls += int64(r.Calls)
		c.Tokens.Prompt += int64(r.PromptTokens)
		c.Tokens.Completion += int64(r.CompletionTokens)
		c.Tokens.Cached += int64(r.CachedTokens)
		c.Tokens.Reasoning += int64(r.ReasoningTokens)
		reasons[r.StoppedReason]++
		tallySplit(envs, r.Environment, r.Success)
		tallySplit(types, r.Derail.InjectionType, r.Success)
	}
	c.Rate = newRate(solved, len(done))
	n := int64(len(done))
	c.TokensPerRun = Tokens{
		Prompt: roundDiv(c.Tokens.Prompt, n), Completion: roundDiv(c.Tokens.Completion, n),
		Cached: roundDiv(c.Tokens.Cached, n), Reasoning: roundDiv(c.Tokens.Reasoning, n),
	}
	for _, k := range sortedKeys(reasons) {
		c.StopReasons = append(c.StopReasons, ReasonCount{Reason: k, Count: reasons[k]})
	}
	c.ByEnvironment, c.ByInjectionType = splits(envs), splits(types)
	return c
}

func tallySplit(m map[string][2]int, name string, success bool) {
	v := m[name]
	v[1]++
	if success {
		v[0]++
	}
	m[name] = v
}

func splits(m map[string][2]int) []Split {
	out := make([]Split, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, Split{Name: k, Rate: newRate(m[k][0], m[k][1])})
	}
	return out
}
