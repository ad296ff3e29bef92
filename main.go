// Command repot is the one binary of repot-operator: the operator, the runner,
// the simulated model server and the tools around them.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/runner/cli"
)

func main() {
	root := &cobra.Command{
		Use:           "repot",
		Short:         "Recoverable Program-of-Thought evaluations: operator, runner and tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(cli.Commands()...)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "repot:", err)
		os.Exit(1)
	}
}
