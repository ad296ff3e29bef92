// Package kueuetesting is the one home of the Kueue quota invariant the
// tests check: which Workloads hold quota by Kueue's own accounting, and
// the check that no more models hold it than the ClusterQueue has room for.
// controllers/integration (the real Kueue manager on envtest) uses it;
// hack/e2e's Kueue suite checks the same on the local cluster.
package kueuetesting

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// HoldsQuota is Kueue's own accounting (its workload controller drops a
// Workload from the ClusterQueue's usage once it is finished or
// deactivated): quota reserved, not finished, and active. A deactivated
// Workload keeps QuotaReserved=True until the operator has removed its
// children and handed the reservation back, but Kueue already counts its
// quota as free and may admit the next model at once.
func HoldsQuota(wl *kueue.Workload) bool {
	return ReservesQuota(wl) && ptr.Deref(wl.Spec.Active, true)
}

// ReservesQuota says whether Kueue still holds the Workload's quota, whatever its
// spec.active says. Between a deactivation and Kueue's eviction the quota
// is still reserved and the children may still run; once Kueue evicts
// (Evicted=True) the operator must remove them.
func ReservesQuota(wl *kueue.Workload) bool {
	return wl != nil && apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
		!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// Holders are the models, in the order given, whose Workload (wls, by
// model) holds quota.
func Holders(wls map[string]*kueue.Workload, models []string) []string {
	var out []string
	for _, m := range models {
		if HoldsQuota(wls[m]) {
			out = append(out, m)
		}
	}
	return out
}

// CheckQuota is the invariant: at most max of the models hold quota. The
// error names the holders and their Workloads' states.
func CheckQuota(wls map[string]*kueue.Workload, models []string, max int) (holders []string, err error) {
	holders = Holders(wls, models)
	if len(holders) > max {
		var d []string
		for _, m := range holders {
			d = append(d, m+" ("+Describe(wls[m])+")")
		}
		return holders, fmt.Errorf("%d Workloads hold quota, more than %d: %s", len(holders), max, strings.Join(d, "; "))
	}
	return holders, nil
}

// Describe is a Workload's state for a failure message: spec.active, the
// resourceVersion and each condition.
func Describe(wl *kueue.Workload) string {
	if wl == nil {
		return "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "active=%v rv=%s", ptr.Deref(wl.Spec.Active, true), wl.ResourceVersion)
	for _, c := range wl.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s/%s@%s", c.Type, c.Status, c.Reason, c.LastTransitionTime.Format(time.TimeOnly))
	}
	return b.String()
}
