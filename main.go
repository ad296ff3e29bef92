// Command repot is the one binary of repot-operator: the operator, the runner,
// the simulated model server and the tools around them.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	opcli "repot.dev/repot-operator/controllers/cli"
	"repot.dev/repot-operator/runner/cli"
)

func main() {
	root := &cobra.Command{
		Use:           "repot",
		Short:         "Recoverable Program-of-Thought evaluations: operator, runner and tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The engine's commands (runner/cli) and the operator's (controllers/cli);
	// the engine reads a cluster for repot report only through the operator's
	// reader.
	cli.SetClusterSources(opcli.ReportSources)
	root.AddCommand(cli.Commands()...)
	root.AddCommand(opcli.Commands()...)
	if err := root.Execute(); err != nil {
		var exit cli.ExitError
		if errors.As(err, &exit) { // a wrapped process's exit code, passed on
			os.Exit(exit.Code)
		}
		fmt.Fprintln(os.Stderr, "repot:", err)
		os.Exit(1)
	}
}
