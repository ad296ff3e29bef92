package contract

import "strconv"

// The layout of a shard's ledger, the ConfigMaps a runner pod records its
// runs in: their names, their planned sizes and the annotations the pod's
// ledger sidecar writes on them. The ledger store (runner/ledger)
// writes them; the operator's builders create the ConfigMaps and its
// planner reads the annotations.

// MaxLedgerBytes bounds the records text of one ledger ConfigMap. A
// ConfigMap holds at most 1 MiB in all; the rest is left for metadata. A
// shard whose records do not fit needs more shards
// (spec.runner.shardsPerModel).
const MaxLedgerBytes = 1000 * 1000

// LedgerSpillName names the n-th spill ConfigMap (n = 1, 2, ...) of a
// ledger: a ledger that is full spills into "<ledger>-1", then
// "<ledger>-2", and so on. The operator creates the spill ConfigMaps with
// the ledger (as many as the shard can need), so a runner needs no right to
// create ConfigMaps.
func LedgerSpillName(ledger string, n int) string { return ledger + "-" + strconv.Itoa(n) }

// LedgerNames are the ConfigMaps of a ledger with spills spill ConfigMaps:
// the ledger first, then its spills in order.
func LedgerNames(ledger string, spills int) []string {
	names := []string{ledger}
	for n := 1; n <= spills; n++ {
		names = append(names, LedgerSpillName(ledger, n))
	}
	return names
}

// Planned sizes of a record's ledger line, from which the operator sizes a
// shard's spill ConfigMaps (LedgerSpillsFor). LedgerRecordBytes is a
// record of any method whose infrastructure error is at MaxTextBytes (its
// other outside texts short); LedgerRoundBytes is each recorded repair
// round on top. The ledger store's TestRecordBytes checks them against the
// largest such records.
const (
	LedgerRecordBytes = 2048
	LedgerRoundBytes  = 64
)

// LedgerSpillsFor is how many spill ConfigMaps a shard of runs records of
// at most recordBytes each needs after its ledger.
func LedgerSpillsFor(runs, recordBytes int) int {
	total := runs * recordBytes
	return max((total+MaxLedgerBytes-1)/MaxLedgerBytes-1, 0)
}

// Annotations the ledger sidecar writes on a ledger ConfigMap.
const (
	// LedgerProvenanceAnnotation is the provenance its runner reported
	// (Provenance as JSON: the runner's repot build, the server's
	// /v1/models, the request parameters). The runner writes it to
	// ProvenanceFile; the ledger-sync sidecar copies it here; the operator
	// shows it in status.models[].provenance.
	LedgerProvenanceAnnotation = "repot.dev/provenance"
	// LedgerSandboxModeAnnotation is the sandbox confinement its runner
	// reported (the runner writes it to SandboxModeFile in its output
	// directory; the ledger-sync sidecar copies it here; the operator
	// shows it in status.sandboxMode).
	LedgerSandboxModeAnnotation = "repot.dev/sandbox-mode"
	// LedgerArtifactsAnnotation is the shard's trace upload progress
	// (artifacts.Progress as JSON), which the ledger sidecar writes as it
	// changes and the operator folds into status.artifacts.
	LedgerArtifactsAnnotation = "repot.dev/artifacts"
)
