// Package methods runs one method on one problem: one model call with its
// program run in the sandbox (call.go), its plan replayed through the
// verifier (contract/replay), and the methods, one file each: pot, pot-retry, repot (with
// repot-no-prefix and repot-restart), repot-adaptive, the repair loop that
// records rounds for repot-vrr and the noisy verifier (loop.go), and the
// Derail-550 conditions (derail.go, derail_judge.go). RunProblem and
// RunDerail (run.go, derail.go) return a contract.Record and a
// contract.Trace. It knows nothing of scheduling or output: that is the
// engine (package runner).
package methods
