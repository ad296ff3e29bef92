// Package controllers is the RepotEvaluation controller's I/O shell: the
// only code of the controller that talks to the API server. The controller
// is split by concern into packages that import downward only
// (imports_test.go checks it):
//
//   - controllers/build: the object builders, pure functions from the spec
//     to the Deployments, Services, Jobs, ledgers, ServiceAccount, Role,
//     RoleBinding and NetworkPolicies of an evaluation; names, labels, Options;
//   - controllers/kueueadapter: Kueue's side, pure: the Workload of a model,
//     its admission read back, the admission gate, the Queue interface;
//   - controllers/planning: the decision, pure functions of the evaluation
//     and the World observed: the Plan, model lifecycle, status, diagnosis,
//     conditions, the records and results of the ledgers, the provenance
//     of each model's figures (planning/provenance.go);
//   - controllers (this package): the shell, below;
//   - controllers/schedule: the RepotSchedule controller
//     (schedule/provenance.go: in what, other than time, a run differed from
//     the one it is compared with); controllers/schedule/cronspec: spec.schedule and spec.timeZone
//     read with robfig/cron and the due times, nothing of Kubernetes (so its
//     fuzz target compiles only that);
//   - controllers/integration: the controller-level tests with a real API
//     server (envtest); controllers/integration/framework: the one envtest
//     harness every API-server test starts (control plane, CRDs, clients,
//     manager).
//
// The readers of results behind `repot results export`, `repot report
// --evaluation/--schedule` and `repot judge` are the commands' (cmd/repot/results).
//
// One reconcile (reconciler.go) reads the world of an evaluation
// (snapshot.go: children through the owner index, keyed by the
// evaluation's UID, one list per kind of planning.ChildKinds; server and
// runner pods, by label and UID; ledger records, through
// planning.RecordCache), overlays the writes the cache has not seen yet
// (pendingwrites.go), decides with planning.Decide, applies the
// child changes (apply.go; a name another owner's object holds, a Kueue
// Workload's included, is reported as ChildNameTaken, never adopted),
// describes the outcome with Plan.Describe, writes the status once and emits events only after that write. setup.go wires the manager (cache, owner index,
// watches), scheme.go its scheme, kueue_wiring.go the Kueue watches,
// observation and Workload operations, kueue_client.go the Queue on Kueue's
// API and whether it is served, kueue_discovery.go the restart once Kueue is
// installed, apiserver.go the API server's addresses from the kubernetes
// EndpointSlice (for the runner NetworkPolicy), podmonitor.go the
// PodMonitor of each GPU server, metrics.go the gauges.
package controllers
