package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/runner/methods"
)

// loadDerail pairs the published Derail-550 cases with PuzzleZoo-775.
func loadDerail(t *testing.T) []methods.DerailTask {
	t.Helper()
	path := shareddata.Require(t, "derail_550.jsonl")
	cases, err := envs.LoadDerail(path)
	if err != nil {
		t.Fatal(err)
	}
	pz, err := envs.Suite("puzzlezoo-775")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := methods.DerailTasks(cases, pz)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestDerailCheckpointsOfPublishedCases builds all 550 checkpoint problems
// from the generated PuzzleZoo-775 oracle plans, under both statements.
func TestDerailCheckpointsOfPublishedCases(t *testing.T) {
	tasks := loadDerail(t)
	if len(tasks) != 550 {
		t.Fatalf("%d cases, want 550", len(tasks))
	}
	for _, st := range contract.DerailStatements {
		if err := validateDerail(tasks, st); err != nil {
			t.Fatal(err)
		}
	}
	kinds := map[string]int{}
	for _, task := range tasks {
		kinds[task.Case.InjectionType]++
	}
	want := map[string]int{"legal_wrong_action": 525, "invalid_action": 25}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("injection types (-want +got):\n%s", diff)
	}
}
