package contract

import "testing"

func TestBudgetCapRoundTrip(t *testing.T) {
	tokens, calls := int64(5000), int64(12)
	for _, tc := range []struct {
		name string
		cap  BudgetCap
		text string
	}{
		{"none", BudgetCap{}, "{}"},
		{"tokens", BudgetCap{CompletionTokens: &tokens}, `{"completionTokens":5000}`},
		{"both", BudgetCap{CompletionTokens: &tokens, ModelCalls: &calls}, `{"completionTokens":5000,"modelCalls":12}`},
	} {
		if got := tc.cap.String(); got != tc.text {
			t.Errorf("%s: String() = %s, want %s", tc.name, got, tc.text)
		}
		back, err := ParseBudgetCap(tc.text)
		if err != nil || !back.Equal(tc.cap) {
			t.Errorf("%s: ParseBudgetCap(%s) = %v, %v; want %v", tc.name, tc.text, back, err, tc.cap)
		}
	}
	if c, err := ParseBudgetCap(" \n"); err != nil || !c.IsZero() {
		t.Errorf("ParseBudgetCap(blank) = %v, %v; want no cap", c, err)
	}
	if _, err := ParseBudgetCap("{"); err == nil {
		t.Error("ParseBudgetCap({) succeeded")
	}
}

func TestBudgetCapEqual(t *testing.T) {
	a, b := int64(1), int64(2)
	for _, tc := range []struct {
		x, y BudgetCap
		want bool
	}{
		{BudgetCap{}, BudgetCap{}, true},
		{BudgetCap{ModelCalls: &a}, BudgetCap{ModelCalls: &a}, true},
		{BudgetCap{ModelCalls: &a}, BudgetCap{ModelCalls: &b}, false},
		{BudgetCap{ModelCalls: &a}, BudgetCap{CompletionTokens: &a}, false},
		{BudgetCap{}, BudgetCap{CompletionTokens: &a}, false},
	} {
		if got := tc.x.Equal(tc.y); got != tc.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}
