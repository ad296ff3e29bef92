package contract

import "strings"

// Files of a run's output directory (`repot run --out DIR`).
const (
	// RecordsFile holds one run record (Record) per line, appended
	// as runs finish. It is also the ledger ConfigMap's data key of the
	// records (LedgerRecordsKey).
	RecordsFile = "records.jsonl"
	// TracesFile holds one trace per run.
	TracesFile = "traces.jsonl"
	// SummaryFile is the aggregate of the records.
	SummaryFile = "summary.json"
	// ProvenanceFile is where `repot run` writes what it runs with (its
	// build, the server's /v1/models, the request parameters) at its start;
	// in a runner pod the ledger-sync sidecar copies it onto the shard's
	// ledger.
	ProvenanceFile = "provenance.json"
	// SandboxModeFile holds the sandbox mode in force, one line; in a runner
	// pod the ledger-sync sidecar copies it onto the ledger ConfigMap.
	SandboxModeFile = "sandbox-mode"
	// ReadingsFile is where a runner appends the GPU readings of its model
	// server (one JSON object per line); also a ledger data key
	// (LedgerReadingsKey).
	ReadingsFile = "gpu.jsonl"
	// RunDoneFile is written by `repot run --await-ledger` once its last
	// record is in RecordsFile: the ledger-sync sidecar then writes every
	// record to the ledger and answers in LedgerSyncedFile.
	RunDoneFile = "run.done"
	// LedgerSyncedFile is the ledger-sync sidecar's answer to RunDoneFile:
	// "ok" when every record of the file is in the ledger, else "failed: "
	// and the reason. `repot run --await-ledger` exits non-zero unless it
	// reads "ok", so the pod fails and its Job retries the shard.
	LedgerSyncedFile = "ledger.synced"
	// BudgetCapFile holds the shard's BudgetCap (JSON), which the ledger
	// sidecars copy from the ledger's LedgerBudgetCapAnnotation (`ledger
	// restore` before the run starts, `ledger sync` as it changes); `repot
	// run` reads it before it admits a model call, at most once a second.
	// Absent or "{}": no cap.
	BudgetCapFile = "budget-cap.json"
)

// Data keys of a ledger ConfigMap.
const (
	// LedgerRecordsKey holds the ledger's records, one per line.
	LedgerRecordsKey = RecordsFile
	// LedgerReadingsKey holds the shard's GPU readings, one per line.
	LedgerReadingsKey = ReadingsFile
)

// LedgerBudgetCapAnnotation on a shard's ledger ConfigMap is the shard's
// BudgetCap (its String), which the operator writes from spec.budget while
// the shard runs; absent or "{}": no cap.
const LedgerBudgetCapAnnotation = "repot.dev/budget-cap"

// LedgerSyncedOK is the content of LedgerSyncedFile when the ledger holds
// every record.
const LedgerSyncedOK = "ok"

// RunDoneContent is what `repot run --await-ledger` writes to RunDoneFile.
const RunDoneContent = "done\n"

// SyncedFailed is the ledger-sync sidecar's answer in LedgerSyncedFile when
// the ledger lacks records: "failed: " and the reason.
func SyncedFailed(reason string) string { return "failed: " + reason }

// ParseSynced reads LedgerSyncedFile's content: ok when the ledger holds
// every record (LedgerSyncedOK), else the sidecar's answer as written.
func ParseSynced(b []byte) (ok bool, answer string) {
	answer = strings.TrimSpace(string(b))
	return answer == LedgerSyncedOK, answer
}
