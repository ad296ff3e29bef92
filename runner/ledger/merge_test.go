package ledger

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func rec(problem, method string, success bool, infra string) contract.Record {
	return contract.Record{Model: "m1", ProblemID: problem, Environment: "tower_of_hanoi", Complexity: 3,
		Method: method, Success: success, InfraError: infra, Calls: 1, PromptTokens: 100}
}

func jsonl(t *testing.T, recs ...contract.Record) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestMerge(t *testing.T) {
	a := rec("p1", "pot", true, "")
	b := rec("p2", "pot", false, "")
	aInfra := rec("p1", "pot", false, "connection reset")
	aOther := rec("p1", "pot", false, "") // same key as a, different outcome
	cases := []struct {
		name      string
		existing  string
		add       []contract.Record
		want      string
		wantAdded int
	}{
		{"empty ledger", "", []contract.Record{a, b}, jsonl(t, a, b), 2},
		{"nothing to add", jsonl(t, a), nil, jsonl(t, a), 0},
		{"same record twice is stored once", jsonl(t, a), []contract.Record{a, a}, jsonl(t, a), 0},
		{"duplicate within a batch", "", []contract.Record{b, b}, jsonl(t, b), 1},
		{"first finished run wins", jsonl(t, a), []contract.Record{aOther}, jsonl(t, a), 0},
		{"finished run replaces infra error in place", jsonl(t, aInfra, b), []contract.Record{a}, jsonl(t, a, b), 1},
		{"infra error does not replace a finished run", jsonl(t, a), []contract.Record{aInfra}, jsonl(t, a), 0},
		{"existing duplicates are collapsed", jsonl(t, a, b, a), nil, jsonl(t, a, b), 0},
		{"blank lines dropped, order kept", "\n" + jsonl(t, b) + "\n\n" + jsonl(t, a), nil, jsonl(t, b, a), 0},
		{"unreadable line kept verbatim", "not json\n" + jsonl(t, a), []contract.Record{b}, "not json\n" + jsonl(t, a, b), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, added := Merge(tc.existing, tc.add)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("merged text (-want +got):\n%s", diff)
			}
			if added != tc.wantAdded {
				t.Errorf("added = %d, want %d", added, tc.wantAdded)
			}
		})
	}
}

func TestMergeIsIdempotent(t *testing.T) {
	recs := []contract.Record{rec("p1", "pot", true, ""), rec("p1", "repot", true, ""), rec("p2", "pot", false, "x")}
	once, _ := Merge("", recs)
	twice, added := Merge(once, recs)
	if once != twice || added != 0 {
		t.Errorf("merging the same records again changed the ledger (added %d):\n%s\nvs\n%s", added, once, twice)
	}
}

func TestParseRecordNeedsKey(t *testing.T) {
	for _, line := range []string{`{"model":"m","problem_id":"p"}`, `{"problem_id":"p","method":"pot"}`, `[1,2]`, `{`} {
		if _, err := contract.ParseRecord([]byte(line)); err == nil {
			t.Errorf("contract.ParseRecord(%s) accepted a line without a full key", line)
		}
	}
}
