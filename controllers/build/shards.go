package build

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// LedgerConfigMaps are the empty ledgers of a model: per shard its ledger
// and the ledger's LedgerSpills spill ConfigMaps (contract.LedgerSpillName), which
// take the shard's records once the ledger is full. The operator creates
// them before the runner Job and never writes their data: the runner's
// ledger sidecar does. They outlive the servers and Jobs and go only with
// the evaluation. Each carries the shard label, and a spill its index
// (LabelSpill).
func LedgerConfigMaps(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) []*corev1.ConfigMap {
	n := int(e.Spec.ShardsPerModelOrDefault())
	spills := LedgerSpills(e)
	out := make([]*corev1.ConfigMap, 0, n*(1+spills))
	for s := range n {
		for i, name := range ledgerChain(e.Name, m.Name, s, spills) {
			cm := &corev1.ConfigMap{
				ObjectMeta: ChildMeta(e, name, m.Name, ComponentLedger),
				Data:       map[string]string{contract.LedgerRecordsKey: ""},
			}
			cm.Labels[LabelShard] = strconv.Itoa(s)
			if i > 0 {
				cm.Labels[LabelSpill] = strconv.Itoa(i)
			}
			out = append(out, cm)
		}
	}
	return out
}

// ledgerChain names a shard's ledger and its spills, in order.
func ledgerChain(eval, model string, shard, spills int) []string {
	return contract.LedgerNames(LedgerName(eval, model, shard), spills)
}

// SuiteSizes are the problem counts of the named suites.
var SuiteSizes = map[repotv1.Suite]int{
	repotv1.SuiteOpenSource120: 120,
	repotv1.SuitePuzzleZoo775:  775,
	repotv1.SuitePlanBench378:  378,
	repotv1.SuiteDerail550:     550,
}

// Runs per shard the CRD allows at most (its CEL rule on
// spec.runner.shardsPerModel): 2000, or 1400 when runs record rounds.
const (
	MaxRunsPerShard       = 2000
	MaxRoundRunsPerShard  = 1400
	maxRecordedRoundsEach = 9 // repairBudget at most 8, plus the first plan
)

// RecordsRounds reports whether the evaluation's runs record their repair
// rounds (contract.Record.Rounds): a repair budget above 1, repot-vrr or
// spec.vrr.
func RecordsRounds(e *repotv1.RepotEvaluation) bool {
	return e.Spec.RepairBudgetOrDefault() > 1 || e.Spec.VRR != nil || slices.Contains(e.Spec.MethodsOrDefault(), repotv1.MethodVRR)
}

// RunsPerShard is the most runs one shard of the evaluation records:
// problems x methods / shards, rounded up, where the problems are counted
// from the suite; for problems of unknown count (a custom file of a
// generated suite) it is the CRD's bound.
func RunsPerShard(e *repotv1.RepotEvaluation) int {
	bound := MaxRunsPerShard
	if RecordsRounds(e) {
		bound = MaxRoundRunsPerShard
	}
	problems := SuiteSizes[e.Spec.SuiteOrDefault()]
	if p := e.Spec.Problems; p != nil && !e.Spec.IsDerail() && e.Spec.SuiteOrDefault() != repotv1.SuitePlanBench378 {
		return bound
	}
	shards := int(e.Spec.ShardsPerModelOrDefault())
	return (problems*len(e.Spec.MethodsOrDefault()) + shards - 1) / shards
}

// LedgerSpills is the number of spill ConfigMaps each shard's ledger gets:
// enough for RunsPerShard records of the planned size (contract.LedgerRecordBytes,
// and contract.LedgerRoundBytes per recorded round), so that a shard whose every
// infrastructure error is at its cap still stores every record. 0 for the
// usual evaluation (120 problems x 4 methods / 4 shards need 245 KB).
func LedgerSpills(e *repotv1.RepotEvaluation) int {
	per := contract.LedgerRecordBytes
	if RecordsRounds(e) {
		per += maxRecordedRoundsEach * contract.LedgerRoundBytes
	}
	return contract.LedgerSpillsFor(RunsPerShard(e), per)
}
