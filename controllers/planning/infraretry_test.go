package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// TestInfraErrorRunsAreRetried: a runner Job that completes with runs that
// ended in an infrastructure error runs again (its --resume runs only
// those), at most MaxInfraRetries times, each retry counted once; then the
// model is Done with the errors counted.
//
// The count is the operator's: a runner that rewrites the annotations of
// its ledgers (the runner identity may patch them; an operator before the
// count moved to the status kept it there) changes nothing.
func TestInfraErrorRunsAreRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(w *World)
	}{
		{"left alone", func(*World) {}},
		{"the runner resets the ledger's annotations before every pass", func(w *World) {
			for i := range w.Ledgers {
				w.Ledgers[i].Annotations = map[string]string{"repot.dev/infra-retries": "0", "repot.dev/infra-retry-of": ""}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { testInfraErrorRunsAreRetried(t, tc.tamper) })
	}
}

func testInfraErrorRunsAreRetried(t *testing.T, tamper func(*World)) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	w := newWorld()
	w.Problems.Count = 2 // 8 runs
	now := t0
	settle(e, w, now)
	setServerReady(w, "ev", "m", true)
	settle(e, w, now)
	jobName := build.RunnerJobName("ev", "m")
	recs := runs("m", 2, t0)
	recs[0].InfraError, recs[1].InfraError = "connection refused", "connection refused"
	w.Records = recs

	type seen struct {
		Phase          string
		Job            string // the Job's UID, "" when none
		Retries        int32
		RunsDone, Errs int32
	}
	var counted int32
	look := func() seen {
		now = now.Add(time.Second)
		tamper(w)
		p := settle(e, w, now)
		uid := ""
		if j := w.job(jobName); j != nil {
			if j.UID == "" {
				j.UID = types.UID("job-" + now.Format("150405")) // the API server's UID
			}
			uid = string(j.UID)
		}
		m := p.Status.Models[0]
		if m.InfraRetries > counted {
			// The pass that counts a retry brings the one that deletes the
			// Job itself: its status write brings no watch event.
			if p.RequeueAfter <= 0 || p.RequeueAfter > infraRetryAfter {
				t.Errorf("the pass that counts retry %d looks again after %v, want at most %v", m.InfraRetries, p.RequeueAfter, infraRetryAfter)
			}
			counted = m.InfraRetries
		}
		return seen{string(m.Phase), uid, m.InfraRetries, m.RunsDone, m.InfraErrorRuns}
	}
	first := look()
	var got []seen
	for attempt := 0; attempt < 3; attempt++ {
		finishJob(w, jobName, batchv1.JobComplete, "Completed")
		// The passes until the Job is there again (or three).
		for range 3 {
			s := look()
			got = append(got, s)
			if s.Job != "" && s.Job != first.Job && (len(got) < 2 || got[len(got)-2].Job == "") {
				break
			}
		}
	}
	want := []seen{
		// The first Job completed: the retry is counted, then the Job goes
		// and comes again, with a new UID.
		{"Running", "done", 1, 6, 2}, {"Running", "", 1, 6, 2}, {"Running", "new", 1, 6, 2},
		{"Running", "done", 2, 6, 2}, {"Running", "", 2, 6, 2}, {"Running", "new", 2, 6, 2},
		// Retries spent: Done, with the errors counted.
		{"Done", "done", 2, 6, 2}, {"Done", "done", 2, 6, 2}, {"Done", "done", 2, 6, 2},
	}
	// Job UIDs vary: "done" is the Job that just completed, "new" a new one.
	prev := first.Job
	for i := range got {
		switch uid := got[i].Job; uid {
		case "":
		case prev:
			got[i].Job = "done"
		default:
			got[i].Job, prev = "new", uid
		}
	}
	if first.Phase != string(repotv1.ModelRunning) || first.Job == "" {
		t.Fatalf("before the Job completed: %+v", first)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passes after each completion (-want +got):\n%s", diff)
	}
}
