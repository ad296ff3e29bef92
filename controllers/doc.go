// Package controllers holds the RepotEvaluation controller (the `repot
// manager` and `repot ledger` commands are in runner/cli).
//
// One reconcile (reconciler.go) reads the world of an evaluation
// (snapshot.go: children through the owner index, server pods, ledger
// records), decides with a pure function (plan.go: planEvaluation, tested
// with tables in plan_test.go), applies the child changes (apply.go), writes
// the status once and emits events only after that write. The decisions are
// split by concern:
//
//   - servers.go, readiness.go, diagnose.go: model servers (vLLM on GPU
//     nodes, the simulated server), their readiness sidecar, and why a
//     server is not ready (unschedulable, image pull, crash loop, probe
//     timeout);
//   - runners.go, shards.go, access.go, netpol.go, security.go: the Indexed
//     runner Job, its ledgers, service account, Role and NetworkPolicy;
//   - records.go, recordcache.go, results.go, status.go, conditions.go,
//     events.go: the status, recomputed from the ledgers on every pass;
//   - lifecycle.go: completion, failure, the active deadline and the TTL.
//
// The controller-level tests with a real API server are in ./integration.
package controllers
