// Package repot is the command tree of the one repot binary: the engine's
// commands (runner/cli) and the operator's (controllers/cli) under one root.
// main.go runs it; the chart and manifest tests check the container args
// they ship against it.
package repot

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	opcli "repot.dev/repot-operator/controllers/cli"
	"repot.dev/repot-operator/runner/cli"
	"repot.dev/repot-operator/runner/judge"
)

// NewRoot returns the repot command with every subcommand. The engine reads
// a cluster (repot report --evaluation/--schedule) only through the
// operator's reader, which it is given here.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "repot",
		Short:         "Recoverable Program-of-Thought evaluations: operator, runner and tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cli.SetClusterSources(opcli.ReportSources)
	opcli.SetTraceJudges(traceJudges)
	root.AddCommand(cli.Commands()...)
	root.AddCommand(opcli.Commands()...)
	return root
}

// traceJudges is runner/judge's re-judging, for repot judge (the
// operator's command reads the cluster and the store; the verifier is the
// engine's).
func traceJudges(suite string, problems io.Reader, noisyVerifier bool) (opcli.LineJudge, error) {
	j, err := judge.New(suite, problems, judge.Options{NoisyVerifier: noisyVerifier})
	if err != nil {
		return nil, err
	}
	return j.Line, nil
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
// that of a wrapped process (cli.ExitError) passed on, 1 for any other
// error, which it prints to stderr.
func Run(args []string, stderr io.Writer) int {
	root := NewRoot()
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var exit cli.ExitError
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
