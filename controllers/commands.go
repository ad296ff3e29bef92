package controllers

import "github.com/spf13/cobra"

// constructors is filled by each command's file through registerCommand.
var constructors []func() *cobra.Command

func registerCommand(f func() *cobra.Command) { constructors = append(constructors, f) }

// Commands returns the subcommands that run Kubernetes machinery: the manager
// and the runner pod's ledger tools.
func Commands() []*cobra.Command {
	out := make([]*cobra.Command, 0, len(constructors))
	for _, f := range constructors {
		out = append(out, f())
	}
	return out
}
