package repot

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// NewRoot returns the repot command with every subcommand.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "repot",
		Short:         "Recoverable Program-of-Thought evaluations: operator, runner and tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(commands()...)
	return root
}

// ParseArgs checks that args (a container's args, without the binary) name
// a repot subcommand and that it accepts their flags, without running it.
func ParseArgs(args []string) error {
	if len(args) == 0 {
		return errors.New("no subcommand")
	}
	cmd, rest, err := NewRoot().Find(args)
	if err != nil {
		return err
	}
	if !cmd.HasParent() {
		return fmt.Errorf("repot has no subcommand %q", args[0])
	}
	return cmd.ParseFlags(rest)
}

// Run executes the root with args and returns the process's exit code:
// that of a wrapped process (ExitError) passed on, 1 for any other
// error, which it prints to stderr.
func Run(args []string, stderr io.Writer) int {
	root := NewRoot()
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var exit ExitError
		if errors.As(err, &exit) {
			return exit.Code
		}
		fmt.Fprintln(stderr, "repot:", err)
		return 1
	}
	return 0
}

// Main runs repot with the process's arguments and exits.
func Main() { os.Exit(Run(os.Args[1:], os.Stderr)) }
