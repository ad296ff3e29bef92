package repot

import (
	"fmt"

	"github.com/spf13/pflag"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
)

// defaultStoreFlags are the manager's default artifact store, which
// evaluations without spec.artifacts use (the chart's artifacts.s3 values).
type defaultStoreFlags struct{ s repotv1.S3Store }

func (d *defaultStoreFlags) register(f *pflag.FlagSet) {
	f.StringVar(&d.s.Endpoint, "artifacts-s3-endpoint", "", "default S3 store (host[:port]) for the traces of evaluations without spec.artifacts (empty: none; they keep traces in the pod)")
	f.StringVar(&d.s.Bucket, "artifacts-s3-bucket", "", "the default store's bucket")
	f.StringVar(&d.s.Prefix, "artifacts-s3-prefix", "", "the default store's key prefix")
	f.StringVar(&d.s.Region, "artifacts-s3-region", "", "the default store's region (empty: asked of the store)")
	f.StringVar(&d.s.CredentialsSecret, "artifacts-s3-credentials-secret", "", "name of the Secret, in each evaluation's namespace, with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (empty: the runners' ambient identity)")
	f.BoolVar(&d.s.Insecure, "artifacts-s3-insecure", false, "plain HTTP to the default store instead of TLS")
}

// store is the default store, nil when no endpoint is set; a partial or
// invalid setting fails the manager at start.
func (d *defaultStoreFlags) store() (*repotv1.S3Store, error) {
	if d.s.Endpoint == "" {
		if d.s.Bucket != "" || d.s.Prefix != "" || d.s.CredentialsSecret != "" {
			return nil, fmt.Errorf("--artifacts-s3-bucket, -prefix and -credentials-secret need --artifacts-s3-endpoint")
		}
		return nil, nil
	}
	loc := artifacts.Location{Endpoint: d.s.Endpoint, Bucket: d.s.Bucket, Prefix: d.s.Prefix, Region: d.s.Region, Insecure: d.s.Insecure}
	if err := loc.Validate(); err != nil {
		return nil, fmt.Errorf("--artifacts-s3-*: %w", err)
	}
	s := d.s
	return &s, nil
}
