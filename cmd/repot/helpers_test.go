package repot

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
)

// execute runs the repot subcommands of this package as the binary would,
// and returns what they printed.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "repot", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(commands()...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
