// Package exporttest checks an exported evaluation against its live status,
// for the controller and end-to-end tests: the figures a person reads in
// `kubectl get -o yaml` and in an export must be the same bytes.
package exporttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/planning"
)

// MatchesStatus reads the summary.json and records.jsonl that `repot results
// export` wrote into dir and checks, for the finished evaluation e:
//   - records.jsonl reads whole, and summary.json is its aggregate;
//   - the summary mapped to status figures marshals to the very bytes of
//     e's status figures, and likewise the capability-scaling report (for
//     two models or more);
//   - there are as many records as the status counts done runs.
func MatchesStatus(e *repotv1.RepotEvaluation, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, contract.SummaryFile))
	if err != nil {
		return err
	}
	var sum summary.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("%s: %w", contract.SummaryFile, err)
	}
	f, err := os.Open(filepath.Join(dir, contract.RecordsFile))
	if err != nil {
		return err
	}
	recs, partial, err := contract.ReadRecords(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", contract.RecordsFile, err)
	}
	if partial != 0 {
		return fmt.Errorf("%s ends in %d bytes of a partial line", contract.RecordsFile, partial)
	}
	if agg := summary.Aggregate(recs); !reflect.DeepEqual(agg, sum) {
		return fmt.Errorf("%s is not the aggregate of %s", contract.SummaryFile, contract.RecordsFile)
	}

	var scaling *summary.ScalingReport
	if len(sum.Models) >= 2 {
		s := summary.Scaling(recs)
		scaling = &s
	}
	figs, sc := planning.FiguresFromSummary(e, sum, scaling)
	if err := sameJSON("figures", figs, planning.FiguresFromStatus(&e.Status)); err != nil {
		return err
	}
	if err := sameJSON("scaling", sc, e.Status.Scaling); err != nil {
		return err
	}
	var runs int32
	for _, m := range e.Status.Models {
		runs += m.RunsDone
	}
	if int32(len(recs)) != runs {
		return fmt.Errorf("%d exported records, but the status counts %d done runs", len(recs), runs)
	}
	return nil
}

// sameJSON compares the exported and the status value of what by their JSON.
func sameJSON(what string, exported, status any) error {
	got, err := json.Marshal(exported)
	if err != nil {
		return err
	}
	want, err := json.Marshal(status)
	if err != nil {
		return err
	}
	if string(got) != string(want) {
		return fmt.Errorf("exported %s differ from the status:\nexported %s\nstatus   %s", what, got, want)
	}
	return nil
}
