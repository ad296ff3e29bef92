package artifacts

import (
	"strings"
	"testing"
)

func TestLocationValidate(t *testing.T) {
	good := Location{Endpoint: "s3.example.com:9000", Bucket: "repot-traces", Prefix: "team-a/evals"}
	cases := []struct {
		name string
		edit func(*Location)
		want string // "" for valid; else a substring of the error
	}{
		{"valid", func(*Location) {}, ""},
		{"no port", func(l *Location) { l.Endpoint = "s3.amazonaws.com" }, ""},
		{"no prefix", func(l *Location) { l.Prefix = "" }, ""},
		{"empty endpoint", func(l *Location) { l.Endpoint = "" }, "endpoint is empty"},
		{"scheme", func(l *Location) { l.Endpoint = "https://s3.example.com" }, "without a scheme"},
		{"path in endpoint", func(l *Location) { l.Endpoint = "s3.example.com/bucket" }, "host[:port] only"},
		{"upper-case bucket", func(l *Location) { l.Bucket = "Traces" }, "bucket \"Traces\""},
		{"short bucket", func(l *Location) { l.Bucket = "ab" }, "bucket"},
		{"dotdot bucket", func(l *Location) { l.Bucket = "a..b" }, "bucket"},
		{"leading slash prefix", func(l *Location) { l.Prefix = "/evals" }, "prefix"},
		{"dotdot prefix", func(l *Location) { l.Prefix = "evals/../other" }, "prefix"},
		{"trailing slash prefix", func(l *Location) { l.Prefix = "evals/" }, "prefix"},
		{"space in prefix", func(l *Location) { l.Prefix = "my evals" }, "prefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := good
			tc.edit(&l)
			err := l.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCredentialsFromEnv(t *testing.T) {
	t.Setenv(EnvAccessKeyID, "AKID")
	t.Setenv(EnvSecretAccessKey, "")
	if _, err := CredentialsFromEnv(); err == nil {
		t.Errorf("an access key without its secret was accepted")
	}
	t.Setenv(EnvSecretAccessKey, "secret")
	c, err := CredentialsFromEnv()
	if err != nil || c.AccessKeyID != "AKID" || c.SecretAccessKey != "secret" {
		t.Errorf("CredentialsFromEnv() = %+v, %v", c, err)
	}
	t.Setenv(EnvAccessKeyID, "")
	t.Setenv(EnvSecretAccessKey, "")
	if c, err := CredentialsFromEnv(); err != nil || c != (Credentials{}) {
		t.Errorf("no variables: %+v, %v; want the ambient identity (zero Credentials)", c, err)
	}
}
