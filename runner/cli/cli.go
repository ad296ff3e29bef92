// Package cli holds the engine's subcommands of the repot binary: suite,
// verify, run, report, sim-server, ready-check, gpu-telemetry and the like.
// It imports nothing under controllers/: the operator's commands (manager,
// ledger, results) are in controllers/cli, and what repot report reads from
// a cluster comes in through SetClusterSources; cmd/repot joins the two.
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
