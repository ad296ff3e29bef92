// Package kueueadapter is the controller's adapter to Kueue: one Workload per
// model that gates the model's server Deployment and runner Job.
//
//   - kueue.go: the Queue interface the controller uses, the QueueWorld it
//     observes (Workloads, ResourceFlavors, priority) and its client
//     implementation; whether Kueue's API is served (KueueInstalled,
//     KueueServed);
//   - kueue_discovery.go: KueueWatch, which stops the manager when Kueue is
//     installed after it started, so that it restarts with Kueue's watches;
//   - kueue_workload.go: the Workload of a model (built from the spec) and
//     the admission read back from it (state, flavors, placement);
//   - kueue_plan.go: the admission gate of a model (may its children run,
//     where) and the Workload operations (submit, requeue, finish).
//
// The controller's side (watches, the plan's Workload operations, the
// status) is kueue_wiring.go in package controllers.
package kueueadapter
