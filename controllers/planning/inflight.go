package planning

import (
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// ShardsInFlight is, per model (by its ledgers' model label), the calls in
// flight each shard settled at: summary.SettledInFlight over the records of
// the shard's ledgers, in shard order. recordsOf gives a ledger's records
// by name (RecordCache.RecordsOf). A shard whose records carry no limit
// (none recorded yet, or written before adaptive concurrency) is left out.
func ShardsInFlight(ledgers []corev1.ConfigMap, recordsOf func(ledger string) []contract.Record) map[string][]repotv1.ShardInFlight {
	type key struct {
		model string
		shard int
	}
	recs := map[key][]contract.Record{}
	for i := range ledgers {
		l := &ledgers[i]
		shard, err := strconv.Atoi(l.Labels[build.LabelShard])
		if err != nil {
			continue
		}
		k := key{l.Labels[build.LabelModel], shard}
		recs[k] = append(recs[k], recordsOf(l.Name)...)
	}
	out := map[string][]repotv1.ShardInFlight{}
	for k, rs := range recs {
		if n, ok := summary.SettledInFlight(rs); ok {
			out[k.model] = append(out[k.model], repotv1.ShardInFlight{Shard: int32(k.shard), Settled: int32(n)})
		}
	}
	for _, s := range out {
		sort.Slice(s, func(i, j int) bool { return s[i].Shard < s[j].Shard })
	}
	return out
}
