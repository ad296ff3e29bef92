package planning

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// What GitOps needs from an evaluation besides its figures: the paired
// comparisons of its methods (computed by the summary, now kept), and a
// problems ConfigMap pinned by content once the evaluation started.

// contentHash is the "sha256:<hex>" of a problem set's text.
func contentHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// startedProblemsHash is status.problemsHash: the hash recorded when the
// evaluation started, kept once set.
func startedProblemsHash(e *repotv1.RepotEvaluation, start *metav1.Time, p problemsInfo) string {
	if e.Status.ProblemsHash != "" {
		return e.Status.ProblemsHash
	}
	if start == nil {
		return ""
	}
	return p.Hash
}

// problemsChanged ends a started evaluation whose problems ConfigMap no
// longer matches the hash recorded at the start: a runner pod started (or
// restarted) from now on would read other problems than its peers, so the
// evaluation fails rather than mix two problem sets. A ConfigMap that
// became unreadable stalls the evaluation instead (problemsInfo.Unavailable).
func problemsChanged(e *repotv1.RepotEvaluation, w *World, now metav1.Time) (outcome, bool) {
	was, is := e.Status.ProblemsHash, w.Problems.Hash
	if was == "" || is == "" || was == is || e.Spec.Problems == nil || e.Spec.Problems.ConfigMap == nil {
		return outcome{}, false
	}
	cm := e.Spec.Problems.ConfigMap
	return outcome{Phase: phaseFailed, Reason: repotv1.ReasonProblemsChanged, CompletionTime: &now, Message: fmt.Sprintf(
		"key %q of ConfigMap %q changed after the evaluation started (was %s, now %s): runners were stopped rather than mix two problem sets; restore the ConfigMap to re-run nothing, or create a new RepotEvaluation for the new problems",
		cm.KeyOrDefault(), cm.Name, shortHash(was), shortHash(is))}, true
}

func shortHash(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// MaxComparisons is how many paired comparisons a model's status lists
// (its CRD bound): every pair of the paper's seven methods.
const MaxComparisons = 21

// methodComparisons maps the summary's paired comparisons of a model's
// methods to the status, in the summary's order. When there are more than
// MaxComparisons, every method's comparison against pot is kept first, then
// the others in order, so that each method has its paired statistic
// against pot.
func methodComparisons(ms *summary.ModelSummary) []repotv1.MethodComparison {
	if ms == nil {
		return nil
	}
	var cs []summary.Comparison
	for _, c := range ms.Comparisons {
		if c.Problems > 0 {
			cs = append(cs, c)
		}
	}
	keep := make([]bool, len(cs))
	n := 0
	for _, againstPoT := range []bool{true, false} {
		for i, c := range cs {
			if n < MaxComparisons && !keep[i] && (c.Baseline == contract.MethodPoT) == againstPoT {
				keep[i] = true
				n++
			}
		}
	}
	var out []repotv1.MethodComparison
	for i, c := range cs {
		if keep[i] {
			out = append(out, repotv1.MethodComparison{
				Method: repotv1.Method(c.Method), Baseline: repotv1.Method(c.Baseline),
				McNemarComparison: PairedStatus(c),
			})
		}
	}
	return out
}

// PairedStatus maps a summary comparison to its API form.
func PairedStatus(c summary.Comparison) repotv1.McNemarComparison {
	return repotv1.McNemarComparison{
		Problems: int32(c.Problems), Solved: int32(c.MethodSolved), BaselineSolved: int32(c.BaselineSolved),
		OnlySolved: int32(c.MethodOnly), BaselineOnlySolved: int32(c.BaselineOnly),
		DiffPermille: int32(c.DiffPermille), DiffPoints: c.DiffPoints, Test: c.Test, PValue: c.PValue,
	}
}
