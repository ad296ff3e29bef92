// Package planning is the RepotEvaluation controller's decision: pure
// functions of an evaluation and the World its reconcile observed, with no
// client, no clock and no randomness (the same inputs always give the same
// Plan). The I/O shell in package controllers reads the World, calls
// Decide, carries the decision out, then calls Plan.Describe with what it
// met (Applied) for the status and events (PlanEvaluation is the two for a
// pass whose changes all take effect, as the tests step a World).
//
//   - world.go, kinds.go, project.go: the World a pass observed (one slice
//     per kind of the ChildKinds registry, the Object interface that stands
//     for client.Object), and the World once a Plan is applied (what the
//     status describes);
//   - plan.go, rejected.go, nametaken.go: the Plan of one pass (Decide:
//     children to create, update, delete, Workload operations; Describe:
//     the status, events, when to look again), what a child the API server rejects means, and what a
//     child whose name another owner's object holds means (ChildNameTaken);
//   - respec.go: every child reconciled against the current spec (the
//     servers and Jobs of removed models deleted, the runner Role and
//     NetworkPolicy updated), for edits that land before the start;
//   - models.go, gpuseconds.go, readiness.go: the per-model lifecycle
//     (Queued, Starting, Running, Done), spec.maxParallelModels and the
//     admission gate (World.Admitted), the servers' readiness, and the
//     GPU-seconds each server held and idled;
//   - kueue_admission.go: the Plan's Kueue part: the models Kueue admitted,
//     the Workload operations, placement by admitted flavor, the admission
//     messages of the status (the Kueue types are in kueueadapter);
//   - diagnose.go, runnerdiag.go: why a server is not ready (waiting for
//     capacity, unschedulable, image pull, crash loop, probe timeout), why
//     runner pods make no progress (image pull, Pending, failed mounts);
//   - trust.go, records.go, recordcache.go: the ledgers an evaluation reads
//     (ExpectedLedgers: by the names it builds, since its runner may patch
//     their metadata), their records (ReadLedgers: each ledger's own
//     model's), parsed once per ConfigMap resourceVersion (RecordCache);
//   - results.go, derail.go, gpucost.go, gitops.go, sandboxmode.go,
//     problems.go: what the status says of the records (per-method results,
//     Derail conditions, GPU energy, paired comparisons and the problem
//     set's hash, sandbox modes, the problem count);
//   - status.go, status_figures.go, conditions.go, evaluation_conditions.go,
//     events.go: the status, recomputed from the World on every pass, its
//     conditions (one function per condition) and the events of their
//     transitions;
//   - budget.go, budgetcap.go, inflight.go: spec.budget (what each model
//     spent, which models must stop, each running shard's cap on its
//     ledger), and the calls in flight each runner shard settled at;
//   - provenance.go: status.models[].provenance (server arguments, images,
//     what the runners reported);
//   - lifecycle.go: completion, failure, the active deadline and the TTL.
package planning
