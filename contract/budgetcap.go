package contract

import (
	"encoding/json"
	"fmt"
	"strings"
)

// BudgetCap is what one runner shard may have spent in all, from the
// operator's spec.budget: the completion tokens and model calls of its
// ledger's records (summary.Spent: its runs and aborted attempts, earlier
// sessions' included) together with those of the calls it made since. It
// is cumulative, so a cap read late is still safe: what the shard spent
// meanwhile counts against it. A nil field caps nothing.
//
// The operator writes it on the shard's ledger ConfigMap
// (LedgerBudgetCapAnnotation, as JSON), the ledger sidecars write that value
// to the run's BudgetCapFile, and `repot run` reads the file before it
// admits a model call: it admits one only while its spending, with the
// calls in flight and the new one at their max_tokens each, stays within
// the cap.
type BudgetCap struct {
	// CompletionTokens caps the completion tokens.
	CompletionTokens *int64 `json:"completionTokens,omitempty"`
	// ModelCalls caps the model calls.
	ModelCalls *int64 `json:"modelCalls,omitempty"`
}

// IsZero reports whether the cap caps nothing.
func (c BudgetCap) IsZero() bool { return c.CompletionTokens == nil && c.ModelCalls == nil }

// Equal reports whether two caps are the same.
func (c BudgetCap) Equal(o BudgetCap) bool {
	eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return eq(c.CompletionTokens, o.CompletionTokens) && eq(c.ModelCalls, o.ModelCalls)
}

// String is the cap as LedgerBudgetCapAnnotation and BudgetCapFile hold it:
// JSON, "{}" for no cap.
func (c BudgetCap) String() string {
	b, _ := json.Marshal(c) // two optional integers always marshal
	return string(b)
}

// ParseBudgetCap reads a cap written by String. Blank text is no cap.
func ParseBudgetCap(text string) (BudgetCap, error) {
	var c BudgetCap
	if strings.TrimSpace(text) == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return BudgetCap{}, fmt.Errorf("budget cap %q: %w", text, err)
	}
	return c, nil
}
