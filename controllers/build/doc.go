// Package build holds the object builders of the RepotEvaluation controller:
// pure functions from an evaluation's spec (and Options) to the children it
// owns. It imports no client and nothing of the controller; package
// planning decides which of these objects should exist.
//
//   - names.go, owner.go: child names (each carries a hash of its (evaluation, model) pair), the
//     labels and selectors, the owner reference and the owner index key;
//   - options.go, defaults.go: the controller's Options and the defaults the
//     builders apply (image, served model name, runtime class);
//   - servers.go, vllm_server.go: the model server Deployment and Service
//     (vLLM on GPU nodes with gpu-telemetry, or the simulated server), the
//     readiness sidecar, the telemetry URL;
//   - runners.go, shards.go, ledger_readings.go: the Indexed runner Job and
//     its `repot run` arguments, the ledger ConfigMaps, one per shard, and
//     the ledger sidecar's arguments;
//   - access.go, netpol.go, security.go: the runner's ServiceAccount, Role
//     and RoleBinding, the runners' and the servers' NetworkPolicies, the
//     restricted security contexts;
//   - placement.go: spec.placement on every child;
//   - provenance.go: the server command the server builders render
//     (ServerArgs) and the one a server Deployment was created with
//     (DeploymentServerArgs), which status.models[].provenance records,
//     and the operator build written on the children it creates.
package build
