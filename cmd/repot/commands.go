package repot

import "github.com/spf13/cobra"

// constructors is filled by each command's file through register, so that
// every command lives in its own file.
var constructors []func() *cobra.Command

func register(f func() *cobra.Command) { constructors = append(constructors, f) }

// commands returns every subcommand of repot.
func commands() []*cobra.Command {
	out := make([]*cobra.Command, 0, len(constructors))
	for _, f := range constructors {
		out = append(out, f())
	}
	return out
}
