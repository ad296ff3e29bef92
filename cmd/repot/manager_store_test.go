package repot

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

func TestDefaultStoreFlags(t *testing.T) {
	cases := []struct {
		args    []string
		want    *repotv1.S3Store
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"--artifacts-s3-endpoint=s3.example.com", "--artifacts-s3-bucket=traces", "--artifacts-s3-credentials-secret=s3"},
			&repotv1.S3Store{Endpoint: "s3.example.com", Bucket: "traces", CredentialsSecret: "s3"}, ""},
		{[]string{"--artifacts-s3-bucket=traces"}, nil, "need --artifacts-s3-endpoint"},
		{[]string{"--artifacts-s3-endpoint=https://s3.example.com", "--artifacts-s3-bucket=traces"}, nil, "without a scheme"},
		{[]string{"--artifacts-s3-endpoint=s3.example.com"}, nil, "bucket"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var d defaultStoreFlags
			fs := pflag.NewFlagSet("m", pflag.ContinueOnError)
			d.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := d.store()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("store() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("store() (-want +got):\n%s", diff)
			}
		})
	}
}
