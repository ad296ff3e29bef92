// Package kueueadapter is the controller's model of Kueue: one Workload per
// model that gates the model's server Deployment and runner Job. It is pure
// (no client); the shell's ../kueue_client.go and ../kueue_wiring.go talk to
// the API server.
//
//   - kueue.go: the Queue interface the shell implements, the QueueWorld it
//     observes (Workloads, ResourceFlavors, priority), the Workload priority,
//     the status change that requeues an evicted Workload;
//   - kueue_workload.go: the Workload of a model (built from the spec) and
//     the admission read back from it (state, flavors, placement);
//   - kueue_plan.go: the admission gate of a model (may its children run,
//     where) and the Workload operations (submit, requeue, finish).
//
// The planner's side (admitted models, the Plan's Workload operations, the
// status) is ../planning/kueue_admission.go.
package kueueadapter
