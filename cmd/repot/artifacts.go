package repot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
)

func init() { register(newArtifactsCommand) }

// terminationLog is where a container's termination message goes (the
// kubelet's default terminationMessagePath).
const terminationLog = "/dev/termination-log"

func newArtifactsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "artifacts",
		Short: "Work with an evaluation's S3 artifact store",
	}
	c.AddCommand(newArtifactsProbeCommand(), newArtifactsRemoveCommand())
	return c
}

func newArtifactsProbeCommand() *cobra.Command {
	var a artifactsFlags
	var namespace, message string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "probe --artifacts-endpoint HOST --artifacts-bucket B --namespace NS --evaluation NAME --evaluation-uid UID",
		Short: "Check that these credentials can list, write, read and delete under the evaluation's prefix",
		Long: `The operator runs this in a Job with the runners' identity, network policy and
credentials before anything of an evaluation with an S3 store starts. It
lists the evaluation's prefix, writes a small object there, reads it back and
deletes it. On failure it writes what failed (the endpoint, the bucket or the
credentials) to the termination message, which the operator copies into the
evaluation's ArtifactStoreUnavailable condition, and exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceUsage = true
			err := probeStore(cmd.Context(), a, namespace, timeout)
			return finishArtifactsCommand(cmd, message, "ok", err, fmt.Sprintf("%s is writable", a.loc.URL()))
		},
	}
	a.register(c, false)
	fl := c.Flags()
	fl.StringVar(&namespace, "namespace", "", "the evaluation's namespace")
	fl.StringVar(&message, "termination-message", terminationLog, "file to write the verdict to (empty: none)")
	fl.DurationVar(&timeout, "timeout", time.Minute, "bound on the whole probe")
	return c
}

// finishArtifactsCommand ends an artifacts command run by the operator: its verdict (ok,
// or err's text) goes to the termination message file (the operator reads
// it from the pod's status), and done to standard output on success.
func finishArtifactsCommand(cmd *cobra.Command, message, ok string, err error, done string) error {
	verdict := ok
	if err != nil {
		verdict = err.Error()
	}
	if message != "" {
		if werr := os.WriteFile(message, []byte(verdict), 0o644); werr != nil && !errors.Is(werr, os.ErrNotExist) {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: writing %s: %v\n", cmd.CommandPath(), message, werr)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", cmd.CommandPath(), done)
	return nil
}

func probeStore(ctx context.Context, a artifactsFlags, namespace string, timeout time.Duration) error {
	creds, err := artifacts.CredentialsFromEnv()
	if err != nil {
		return err
	}
	l := artifacts.Layout{Prefix: a.loc.Prefix, Namespace: namespace, Evaluation: a.evaluation, UID: a.uid}
	if err := l.Validate(); err != nil {
		return err
	}
	st, err := s3.Open(a.loc, creds, s3.Options{MaxRetries: 3})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return st.Probe(ctx, l.EvaluationPrefix(), "operator")
}

func newArtifactsRemoveCommand() *cobra.Command {
	var a artifactsFlags
	var namespace, message string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "remove --artifacts-endpoint HOST --artifacts-bucket B --namespace NS --evaluation NAME --evaluation-uid UID",
		Short: "Delete every stored object of one evaluation (its PREFIX/NAMESPACE/NAME/UID/ keys)",
		Long: `The operator runs this in a Job with the runners' identity, network policy and
credentials when an evaluation with spec.artifacts.retainAfterDeletion false
is deleted, after its runners have stopped. It deletes every key under the
evaluation's own prefix (which includes its UID, so a later evaluation of the
same name keeps its traces) and nothing else. On failure it writes what
failed to the termination message, which the operator reports in a warning
event on the evaluation, and exits 1; the operator runs it again a minute
later.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceUsage = true
			n, err := removeStored(cmd.Context(), a, namespace, timeout)
			done := fmt.Sprintf("deleted %d objects under %s", n, a.loc.URL())
			return finishArtifactsCommand(cmd, message, done, err, done)
		},
	}
	a.register(c, false)
	fl := c.Flags()
	fl.StringVar(&namespace, "namespace", "", "the evaluation's namespace")
	fl.StringVar(&message, "termination-message", terminationLog, "file to write the verdict to (empty: none)")
	fl.DurationVar(&timeout, "timeout", 9*time.Minute, "bound on the whole removal")
	return c
}

// removeStored deletes the evaluation's keys and returns how many.
func removeStored(ctx context.Context, a artifactsFlags, namespace string, timeout time.Duration) (int, error) {
	creds, err := artifacts.CredentialsFromEnv()
	if err != nil {
		return 0, err
	}
	l := artifacts.Layout{Prefix: a.loc.Prefix, Namespace: namespace, Evaluation: a.evaluation, UID: a.uid}
	if err := l.Validate(); err != nil {
		return 0, err
	}
	st, err := s3.Open(a.loc, creds, s3.Options{MaxRetries: 3})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return st.RemovePrefix(ctx, l.EvaluationPrefix())
}
