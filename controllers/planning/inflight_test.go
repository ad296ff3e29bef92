package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func TestShardsInFlight(t *testing.T) {
	ledger := func(name, model, shard string) corev1.ConfigMap {
		return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{build.LabelModel: model, build.LabelShard: shard}}}
	}
	limits := func(ls ...int) []contract.Record {
		var rs []contract.Record
		for _, l := range ls {
			rs = append(rs, contract.Record{InFlightLimit: l})
		}
		return rs
	}
	tests := []struct {
		name    string
		ledgers []corev1.ConfigMap
		records map[string][]contract.Record
		want    map[string][]repotv1.ShardInFlight
	}{{
		name:    "no ledgers",
		records: map[string][]contract.Record{},
		want:    map[string][]repotv1.ShardInFlight{},
	}, {
		name:    "medians per shard, in shard order, per model",
		ledgers: []corev1.ConfigMap{ledger("l-a-1", "a", "1"), ledger("l-a-0", "a", "0"), ledger("l-b-0", "b", "0")},
		records: map[string][]contract.Record{"l-a-0": limits(4, 9, 10), "l-a-1": limits(12, 3, 12, 14), "l-b-0": limits(7)},
		want:    map[string][]repotv1.ShardInFlight{"a": {{Shard: 0, Settled: 9}, {Shard: 1, Settled: 12}}, "b": {{Shard: 0, Settled: 7}}},
	}, {
		name:    "records without a limit (written before adaptive concurrency) and empty ledgers are left out",
		ledgers: []corev1.ConfigMap{ledger("l-a-0", "a", "0"), ledger("l-a-1", "a", "1"), ledger("l-a-2", "a", "2")},
		records: map[string][]contract.Record{"l-a-0": limits(0, 0), "l-a-1": limits(0, 6, 8)},
		want:    map[string][]repotv1.ShardInFlight{"a": {{Shard: 1, Settled: 8}}},
	}, {
		name:    "a ledger without a shard label is not a shard",
		ledgers: []corev1.ConfigMap{ledger("l-a-x", "a", "")},
		records: map[string][]contract.Record{"l-a-x": limits(5)},
		want:    map[string][]repotv1.ShardInFlight{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ShardsInFlight(tc.ledgers, func(name string) []contract.Record { return tc.records[name] })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ShardsInFlight (-want +got):\n%s", d)
			}
		})
	}
}
