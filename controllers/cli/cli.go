// Package cli holds the operator's subcommands of the repot binary: manager
// (the operator), ledger (the runner pod's ledger tools), results export, judge and
// the cluster reader behind repot report's --evaluation and --schedule.
// The engine's subcommands (suite, verify, run, report, sim-server, ...) are
// in runner/cli, which imports nothing under controllers/; cmd/repot joins both
// sets and passes ReportSources to runner/cli.
//
//   - manager.go: repot manager, the controller manager and its flags;
//   - ledger.go, ledger_restore.go, ledger_sync.go, ledger_readings.go: repot
//     ledger restore|sync, the init container and sidecar of a runner pod;
//   - results.go: repot results export;
//   - judge.go: repot judge, the audit of an evaluation's stored traces
//     (the re-judging itself is the engine's runner/judge, set by cmd/repot);
//   - report.go: ReportSources, what repot report reads from a cluster;
//   - cluster.go: the kubeconfig flags and client of the commands above.
package cli

import "github.com/spf13/cobra"

// constructors is filled by each command's file through register, so that
// every command lives in its own file.
var constructors []func() *cobra.Command

func register(f func() *cobra.Command) { constructors = append(constructors, f) }

// Commands returns the subcommands this package provides.
func Commands() []*cobra.Command {
	out := make([]*cobra.Command, 0, len(constructors))
	for _, f := range constructors {
		out = append(out, f())
	}
	return out
}
