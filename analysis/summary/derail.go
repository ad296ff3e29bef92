package summary

import (
	"sort"

	"repot.dev/repot-operator/contract"
)

// DerailModelSummary is the Derail-550 figures of one model under one
// checkpoint statement.
type DerailModelSummary struct {
	Model               string `json:"model"`
	CheckpointStatement string `json:"checkpoint_statement"`
	// Cases is the number of distinct cases with any record.
	Cases int `json:"cases"`
	// Conditions are in contract.DerailConditions order, then others by name.
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
func isDerail(r contract.Record) bool {
	return r.Derail != nil && r.Derail.Schema == contract.DerailSchema
}

// aggregateDerail computes the Derail figures per (model, statement).
func aggregateDerail(recs []contract.Record) []DerailModelSummary {
	type group struct{ model, statement string }
	groups := map[group][]contract.Record{}
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

func derailModel(model, statement string, recs []contract.Record) DerailModelSummary {
	s := DerailModelSummary{Model: model, CheckpointStatement: statement, Conditions: []ConditionSummary{}, VsErrorOnly: []Comparison{}}
	var by map[string][]contract.Record
	s.Cases, by = byMethodOf(recs)
	conds := orderedNames(sortedKeys(by), contract.DerailConditions)
	finished := finishedRuns(conds, by)
	for _, c := range conds {
		s.Conditions = append(s.Conditions, conditionSummary(c, by[c]))
	}
	if base, ok := finished[contract.CondErrorOnly]; ok {
		for _, c := range conds {
			if c != contract.CondErrorOnly {
				s.VsErrorOnly = append(s.VsErrorOnly, compare(c, contract.CondErrorOnly, finished[c], base))
			}
		}
	}
	return s
}

func conditionSummary(cond string, recs []contract.Record) ConditionSummary {
	c := ConditionSummary{Condition: cond, StopReasons: []ReasonCount{}}
	var done []contract.Record
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
