// Package summary turns run records into the evaluation's figures. It is the
// one definition of "success rate", "route" and "cost relative to pot", used
// by `repot run` and by the operator's status alike. It imports nothing from
// Kubernetes or the model client.
package summary

import (
	"sort"

	"repot.dev/repot-operator/contract"
)

// SettledInFlight is the concurrency a shard settled at, from its records
// (one shard's ledger): the median InFlightLimit of the records that carry
// one, and whether any did. The operator shows it per shard in status.
func SettledInFlight(recs []contract.Record) (int, bool) {
	var ls []int
	for _, r := range recs {
		if r.InFlightLimit > 0 {
			ls = append(ls, r.InFlightLimit)
		}
	}
	if len(ls) == 0 {
		return 0, false
	}
	sort.Ints(ls)
	return ls[len(ls)/2], true
}
