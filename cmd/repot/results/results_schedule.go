package results

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// scheduleGVK is the RepotSchedule kind. The report reads schedules as
// unstructured objects decoded into scheduleView, so it depends only on the
// JSON names of the history it shows.
var scheduleGVK = schema.GroupVersionKind{Group: repotv1.GroupVersion.Group, Version: repotv1.GroupVersion.Version, Kind: "RepotSchedule"}

// LabelSchedule names the schedule that created an evaluation.
const LabelSchedule = "repot.dev/schedule"

// scheduleView is the part of a RepotSchedule a report shows: the history
// of finished runs with their figures and comparisons.
type scheduleView struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		History []struct {
			Name          string       `json:"name"`
			ScheduledTime metav1.Time  `json:"scheduledTime"`
			Completion    *metav1.Time `json:"completionTime,omitempty"`
			Result        string       `json:"result"`
			Models        []struct {
				Name    string `json:"name"`
				Methods []struct {
					Method       string `json:"method"`
					Rate         string `json:"rate"`
					RatePermille int32  `json:"ratePermille"`
					Interval     string `json:"interval"`
				} `json:"methods"`
			} `json:"models"`
			ComparedWith string   `json:"comparedWith"`
			Differences  []string `json:"differences"`
			Comparisons  []struct {
				Model           string `json:"model"`
				Method          string `json:"method"`
				DiffPoints      string `json:"diffPoints"`
				PValue          string `json:"pValue"`
				SignificantDrop bool   `json:"significantDrop"`
			} `json:"comparisons"`
		} `json:"history"`
	} `json:"status"`
}

// scheduleHistory maps a schedule's history to report points, oldest first.
func scheduleHistory(v *scheduleView) *report.Schedule {
	s := &report.Schedule{Name: v.Namespace + "/" + v.Name}
	for _, run := range v.Status.History {
		type key struct{ model, method string }
		cmp := map[key]int{}
		for i, c := range run.Comparisons {
			cmp[key{c.Model, c.Method}] = i
		}
		for _, m := range run.Models {
			for _, mr := range m.Methods {
				pt := report.SchedulePoint{
					Time: run.ScheduledTime.Time.UTC(), Evaluation: run.Name, Model: m.Name, Method: mr.Method,
					Rate: summary.Rate{Permille: int(mr.RatePermille), Percent: mr.Rate, Interval: mr.Interval},
				}
				if i, ok := cmp[key{m.Name, mr.Method}]; ok {
					c := run.Comparisons[i]
					pt.Regression, pt.Change, pt.PValue = c.SignificantDrop, c.DiffPoints, c.PValue
				}
				if mr.Rate == "" {
					continue // no result for this method in that run
				}
				s.Points = append(s.Points, pt)
			}
		}
	}
	sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].Time.Before(s.Points[j].Time) })
	for i := len(v.Status.History) - 1; i >= 0; i-- { // the history is newest first
		if run := v.Status.History[i]; len(run.Differences) > 0 {
			s.Differences = append(s.Differences, report.RunDifferences{Evaluation: run.Name, ComparedWith: run.ComparedWith, Differences: run.Differences})
		}
	}
	return s
}

// ReadSchedule reads a RepotSchedule's history and the evaluations it
// created that still exist.
func ReadSchedule(ctx context.Context, c client.Reader, namespace, name string) (*report.Schedule, []*EvaluationResults, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(scheduleGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, u); err != nil {
		return nil, nil, fmt.Errorf("reading RepotSchedule %s/%s: %w", namespace, name, err)
	}
	var v scheduleView
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
		return nil, nil, fmt.Errorf("RepotSchedule %s/%s: %w", namespace, name, err)
	}
	var evals repotv1.RepotEvaluationList
	if err := c.List(ctx, &evals, client.InNamespace(namespace), client.MatchingLabels{LabelSchedule: name}); err != nil {
		return nil, nil, fmt.Errorf("listing the runs of RepotSchedule %s/%s: %w", namespace, name, err)
	}
	sort.Slice(evals.Items, func(i, j int) bool { return evals.Items[i].CreationTimestamp.Before(&evals.Items[j].CreationTimestamp) })
	var runs []*EvaluationResults
	for _, e := range evals.Items {
		res, err := ReadEvaluationResults(ctx, c, namespace, e.Name)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, res)
	}
	return scheduleHistory(&v), runs, nil
}

// ReadScheduleReport is ReadSchedule as report parts: the history and one
// source per run.
func ReadScheduleReport(ctx context.Context, c client.Reader, namespace, name string) (*report.Schedule, []report.Source, error) {
	sched, runs, err := ReadSchedule(ctx, c, namespace, name)
	if err != nil {
		return nil, nil, err
	}
	var srcs []report.Source
	for _, r := range runs {
		srcs = append(srcs, r.Source(report.OriginEvaluation))
	}
	return sched, srcs, nil
}
