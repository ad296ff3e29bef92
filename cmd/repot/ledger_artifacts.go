package repot

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
	"repot.dev/repot-operator/contract"
)

// artifactsFlags are `ledger sync`'s flags for uploading the shard's traces
// to an S3 store; the credentials come from the environment
// (artifacts.EnvAccessKeyID, artifacts.EnvSecretAccessKey) or the ambient
// identity, never from a flag (a flag shows in the pod spec).
type artifactsFlags struct {
	loc        artifacts.Location
	evaluation string
	uid        string
	shard      artifacts.Shard
	tracesFile string
}

// register adds the store's and the evaluation's flags, and with shard
// those of the shard whose traces are uploaded.
func (a *artifactsFlags) register(c *cobra.Command, shard bool) {
	fl := c.Flags()
	fl.StringVar(&a.loc.Endpoint, "artifacts-endpoint", "", "S3 store host[:port] to upload the shard's traces to (empty: no upload); credentials from "+artifacts.EnvAccessKeyID+" and "+artifacts.EnvSecretAccessKey+", else the ambient identity")
	fl.StringVar(&a.loc.Bucket, "artifacts-bucket", "", "the store's bucket")
	fl.StringVar(&a.loc.Prefix, "artifacts-prefix", "", "key prefix in the bucket")
	fl.StringVar(&a.loc.Region, "artifacts-region", "", "the bucket's region (empty: asked of the store)")
	fl.BoolVar(&a.loc.Insecure, "artifacts-insecure", false, "plain HTTP instead of TLS")
	fl.StringVar(&a.evaluation, "evaluation", "", "the evaluation's name (for the object keys)")
	fl.StringVar(&a.uid, "evaluation-uid", "", "the evaluation's UID (for the object keys)")
	if !shard {
		return
	}
	fl.StringVar(&a.shard.Model, "model", "", "the shard's model")
	fl.IntVar(&a.shard.Index, "shard", -1, "the shard's index")
	fl.StringVar(&a.tracesFile, "traces-file", "", "the runner's traces file (default traces.jsonl beside --file)")
}

func (a *artifactsFlags) enabled() bool { return a.loc.Endpoint != "" }

// uploader builds the shard's uploader; dir is the runner's output
// directory, where the upload state is kept.
func (a *artifactsFlags) uploader(namespace, dir string) (*s3.ShardUploader, error) {
	creds, err := artifacts.CredentialsFromEnv()
	if err != nil {
		return nil, err
	}
	l := artifacts.Layout{Prefix: a.loc.Prefix, Namespace: namespace, Evaluation: a.evaluation, UID: a.uid}
	if err := errors.Join(l.Validate(), a.shard.Validate()); err != nil {
		return nil, fmt.Errorf("ledger sync: artifacts: %w", err)
	}
	st, err := s3.Open(a.loc, creds, s3.Options{})
	if err != nil {
		return nil, err
	}
	path := a.tracesFile
	if path == "" {
		path = filepath.Join(dir, contract.TracesFile)
	}
	return &s3.ShardUploader{
		Store: st, Layout: l, Shard: a.shard, Path: path,
		StatePath: filepath.Join(dir, "artifacts.state"),
	}, nil
}
