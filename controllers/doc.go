// Package controllers holds the RepotEvaluation controller: the I/O shell
// that talks to the API server and the pure planning it calls. The code is
// split by concern into packages that import downward only (imports_test.go
// checks it):
//
//   - controllers/build: the object builders, pure functions from the spec
//     to the Deployments, Services, Jobs, ledgers, ServiceAccount, Role,
//     RoleBinding and NetworkPolicy of an evaluation; names, labels, Options;
//   - controllers/kueueadapter: Kueue: the Workload of a model, its
//     admission read back, the admission gate, the Queue client;
//   - controllers (this package): the reconciler and the planner, below;
//   - controllers/results: the readers behind `repot results export` and
//     `repot report --evaluation/--schedule`;
//   - controllers/cli: the operator's commands (`repot manager`, `repot
//     ledger`, `repot results`), joined with runner/cli's in main.go;
//   - controllers/ledger: the ledger ConfigMap store of a runner shard (used
//     by the runner pod's ledger containers and by the readers);
//   - controllers/schedule: the RepotSchedule controller;
//   - controllers/integration: the controller-level tests with a real API
//     server (envtest); controllers/exporttest: export fixtures for tests.
//
// The I/O shell, the only code here with a client: one reconcile
// (reconciler.go) reads the world of an evaluation (snapshot.go: children
// through the owner index, with the kinds listed once in kinds.go; server
// and runner pods; ledger records, parsed once per resourceVersion by
// recordcache.go), overlays the writes the cache has not seen yet
// (pendingwrites.go), decides with a pure function (plan.go:
// planEvaluation, tested with tables in plan_test.go), applies the child
// changes (apply.go), writes the status once and emits events only after
// that write. setup.go wires the manager (cache, owner index, watches),
// scheme.go its scheme, kueue_wiring.go the Kueue watches and Workload
// operations, podmonitor.go the PodMonitor of each GPU server, metrics.go
// the gauges.
//
// The planning, pure functions of the evaluation and its world:
//
//   - world.go, project.go: the world a pass observed, and the world once
//     the plan is applied (what the status describes);
//   - plan.go, rejected.go: the plan of one pass, and what a child the API
//     server rejects means (fed back to the planner);
//   - models.go, gpuseconds.go, readiness.go: the per-model lifecycle
//     (Queued, Starting, Running, Done), spec.maxParallelModels and the
//     admission gate (world.Admitted; Kueue's side in kueue_wiring.go), the
//     servers' readiness, and the GPU-seconds each server held and idled;
//   - diagnose.go, runnerdiag.go: why a server is not ready (waiting for
//     capacity, unschedulable, image pull, crash loop, probe timeout), why
//     runner pods make no progress (image pull, Pending, failed mounts);
//   - records.go, results.go, derail.go, gpucost.go, gitops.go,
//     sandboxmode.go, problems.go: the ledgers' records and what the status
//     says of them (per-method results, Derail conditions, GPU energy,
//     paired comparisons and the problem set's hash, sandbox modes, the
//     problem count);
//   - status.go, status_figures.go, conditions.go, events.go: the status,
//     recomputed from the world on every pass, its conditions and the
//     events of their transitions;
//   - lifecycle.go: completion, failure, the active deadline and the TTL.
package controllers
