// Package runner is the evaluation engine behind `repot run` and the
// runner pods: it shards the problems, orders the runs longest first,
// bounds and adapts the model calls in flight (runner/concurrency), runs each
// (problem, method) through runner/methods, writes the records and traces
// as they finish (output.go), resumes an interrupted run and prints its
// progress. It knows nothing about Kubernetes; the operator reads what it
// writes through package contract.
package runner
