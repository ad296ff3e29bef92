package runner

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/vrr"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/methods"
)

// vrrLoopOf is what a repot-vrr record says about its loop (no clocks).
type vrrLoopOf struct {
	Success     bool
	LoopStop    string
	Calibration bool
	Rounds      []contract.Round
}

func vrrLoops(recs []contract.Record) map[string]vrrLoopOf {
	out := map[string]vrrLoopOf{}
	for _, r := range recs {
		out[r.ProblemID] = vrrLoopOf{r.Success, r.LoopStop, r.VRRCalibration, r.Rounds}
	}
	return out
}

// runVRR runs repot-vrr on problems against a fresh simulated server.
func runVRR(t *testing.T, n, conc int, done map[string]bool, previous []contract.Record) Result {
	t.Helper()
	hs := startSim(t, simOptions(t, subsetSeed, 0), nil)
	opts := methods.DefaultOptions()
	opts.Model, opts.RepairBudget = "sim-strong", 3
	opts.VRR = vrr.Config{Votes: 3, Noise: vrr.Noise{FalseAcceptPermille: 150, FalseRejectPermille: 150}, CalibrationProblems: 8}
	var recs bytes.Buffer
	res, err := Run(context.Background(), Config{
		Problems: openSource(t, n), Methods: []string{contract.MethodVRR}, Options: opts, Concurrency: conc,
		Deps: methods.Deps{Client: simClient(t, hs, 3), Sandbox: realSandbox(t)}, Records: &recs, Done: done, Previous: previous,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestVRRCalibrationIsReproducible: the two passes give the same loops at
// concurrency 1 and 64 (the estimates depend on the calibration records,
// not on the order they finished in), and a resume that finds the
// calibration runs in its ledger reuses them and makes the same loops.
func TestVRRCalibrationIsReproducible(t *testing.T) {
	const n = 24
	first := runVRR(t, n, DefaultConcurrency, nil, nil)
	calib := 0
	for _, r := range first.Records {
		if r.VRRCalibration {
			calib++
		}
	}
	if calib != 8 || len(first.Records) != n {
		t.Fatalf("%d records, %d calibration runs; want %d and 8", len(first.Records), calib, n)
	}
	want := vrrLoops(first.Records)
	if diff := cmp.Diff(want, vrrLoops(runVRR(t, n, 1, nil, nil).Records)); diff != "" {
		t.Errorf("concurrency 1 differs from %d (-64 +1):\n%s", DefaultConcurrency, diff)
	}
	// A resume whose ledger holds the calibration runs and a few others.
	var previous []contract.Record
	done := map[string]bool{}
	for i, r := range first.Records {
		if r.VRRCalibration || i%3 == 0 {
			previous = append(previous, r)
			done[r.Key()] = true
		}
	}
	resumed := runVRR(t, n, DefaultConcurrency, done, previous)
	if resumed.Planned != n-len(previous) {
		t.Errorf("the resume planned %d runs, want %d", resumed.Planned, n-len(previous))
	}
	got := vrrLoops(append(previous, resumed.Records...))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the resumed run differs (-first +resumed):\n%s", diff)
	}
}
