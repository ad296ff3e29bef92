// Package cli holds the subcommands of the repot binary: suite, verify, run,
// sim-server, ready-check, and the Kubernetes ones, manager (the operator)
// and ledger (the runner pod's ledger tools).
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
