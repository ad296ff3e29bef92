package kueuetesting

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func workload(active *bool, conds ...string) *kueue.Workload {
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{Active: active}}
	for _, c := range conds {
		wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "R"})
	}
	return wl
}

func TestHoldsAndReservesQuota(t *testing.T) {
	tests := []struct {
		name            string
		wl              *kueue.Workload
		holds, reserves bool
	}{
		{"none", nil, false, false},
		{"pending", workload(nil), false, false},
		{"reserved", workload(nil, kueue.WorkloadQuotaReserved), true, true},
		{"reserved, active set", workload(ptr.To(true), kueue.WorkloadQuotaReserved), true, true},
		{"deactivated, not yet evicted: Kueue counts it free", workload(ptr.To(false), kueue.WorkloadQuotaReserved), false, true},
		{"finished", workload(nil, kueue.WorkloadQuotaReserved, kueue.WorkloadFinished), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HoldsQuota(tt.wl); got != tt.holds {
				t.Errorf("HoldsQuota() = %v, want %v", got, tt.holds)
			}
			if got := ReservesQuota(tt.wl); got != tt.reserves {
				t.Errorf("ReservesQuota() = %v, want %v", got, tt.reserves)
			}
		})
	}
}

func TestCheckQuota(t *testing.T) {
	wls := map[string]*kueue.Workload{
		"a": workload(nil, kueue.WorkloadQuotaReserved),
		"b": workload(ptr.To(false), kueue.WorkloadQuotaReserved),
		"c": workload(nil, kueue.WorkloadQuotaReserved),
		"d": workload(nil),
	}
	models := []string{"a", "b", "c", "d", "e"}
	holders, err := CheckQuota(wls, models, 2)
	if err != nil {
		t.Errorf("CheckQuota(max 2) = %v, want no error", err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, holders); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
	_, err = CheckQuota(wls, models, 1)
	if err == nil || !strings.Contains(err.Error(), "2 Workloads hold quota, more than 1: a (active=true") || !strings.Contains(err.Error(), "; c (") {
		t.Errorf("CheckQuota(max 1) = %v, want the two holders named", err)
	}
}
