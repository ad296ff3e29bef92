// Package contract is the wire between the runner and the operator: what a
// runner writes and the operator, the ledger sidecar, the schedule
// controller and the analysis read. It holds
//
//   - the names: methods, Derail-550 conditions, routes, stop reasons, call
//     purposes and loop stops (names.go);
//   - the run record and its one parser (record.go);
//   - the trace of a run, with the chat messages and token usage it records
//     (trace.go);
//   - a run's provenance (provenance.go);
//   - a GPU reading of the telemetry sidecar (gpu.go);
//   - the files of a run's output directory, the ledger ConfigMap's keys
//     and the runner's done-to-synced hand-off with the ledger sidecar
//     (files.go);
//   - a shard's budget cap, from the operator through the ledger to the
//     runner (budgetcap.go).
//
// It imports only the standard library, so that every side can import it:
// the engine (runner/...), the analysis (analysis/...) and the operator
// (controllers/...), which never imports the engine.
package contract
