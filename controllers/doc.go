// Package controllers holds the RepotEvaluation controller (the `repot
// manager`, `repot ledger` and `repot results` commands are in ./cli).
//
// One reconcile (reconciler.go) reads the world of an evaluation
// (snapshot.go: children through the owner index, with the kinds listed
// once in kinds.go; server and runner pods; ledger records), decides with a
// pure function (plan.go: planEvaluation, tested with tables in
// plan_test.go), applies the child changes (apply.go), writes the status
// once and emits events only after that write. A child the API server
// rejects is fed back to the planner (rejected.go). The decisions are split
// by concern:
//
//   - models.go, gpuseconds.go: the per-model lifecycle (Queued, Starting,
//     Running, Done), spec.maxParallelModels and the admission gate
//     (world.Admitted), and the GPU-seconds each server held and idled;
//   - placement.go: spec.placement on every child;
//   - servers.go, readiness.go, diagnose.go: model servers (vLLM on GPU
//     nodes, the simulated server), their readiness sidecar, and why a
//     server is not ready (waiting for capacity, unschedulable, image
//     pull, crash loop, probe timeout); runnerdiag.go: why runner pods make
//     no progress (image pull, Pending, failed mounts);
//   - runners.go, shards.go, access.go, netpol.go, security.go: the Indexed
//     runner Job, its ledgers, service account, Role and NetworkPolicy;
//   - records.go, recordcache.go, results.go, status.go, conditions.go,
//     events.go: the status, recomputed from the ledgers on every pass;
//   - lifecycle.go: completion, failure, the active deadline and the TTL.
//
// The controller-level tests with a real API server are in ./integration.
package controllers
