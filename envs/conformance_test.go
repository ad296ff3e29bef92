package envs

import (
	"os"
	"testing"

	"repot.dev/repot-operator/envs/shareddata"
)

func loadFileProblems(t *testing.T, name string) []Problem {
	t.Helper()
	ps, err := LoadProblemsFile(shareddata.Require(t, name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return ps
}

// TestConformance replays every recorded transition of the reference
// verifiers against the Go environments.
func TestConformance(t *testing.T) {
	path := shareddata.Require(t, "verifier_conformance.jsonl")
	pz, err := Suite("puzzlezoo-775")
	if err != nil {
		t.Logf("generated suite unavailable (%v); using the published file", err)
		pz = loadFileProblems(t, "puzzlezoo_775.jsonl")
	}
	pb := loadFileProblems(t, "planbench_blocksworld.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := CheckConformance(f, IndexProblems(pz, pb))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rep.First {
		t.Error(d)
	}
	if rep.Agree != rep.Total || rep.Total != 12674 {
		t.Errorf("agree %d/%d, want 12674/12674", rep.Agree, rep.Total)
	}
}
