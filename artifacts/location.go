package artifacts

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
)

// Location is where an evaluation's artifacts go.
type Location struct {
	// Endpoint is the store's host and port (no scheme), for example
	// "s3.us-east-1.amazonaws.com" or "artifacts.repot-system:7070".
	Endpoint string
	// Bucket must exist; the runner never creates it.
	Bucket string
	// Prefix is prepended to every key ("" for none): slash-separated
	// segments of letters, digits, '.', '_' and '-'.
	Prefix string
	// Region is the bucket's region ("" lets the client ask the store).
	Region string
	// Insecure uses plain HTTP. TLS is the default; plain HTTP must be
	// asked for.
	Insecure bool
}

// Credentials are a static access key, or none for the ambient identity
// (AWS_* environment variables, IRSA's web identity token, the instance
// metadata service).
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

// Environment variables the sidecar reads its credentials from (the keys
// of the Secret spec.artifacts.s3.credentialsSecret names, the names the
// AWS tools use).
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
)

// CredentialsFromEnv reads the static key from the environment; both unset
// means the ambient identity.
func CredentialsFromEnv() (Credentials, error) {
	c := Credentials{AccessKeyID: os.Getenv(EnvAccessKeyID), SecretAccessKey: os.Getenv(EnvSecretAccessKey)}
	if (c.AccessKeyID == "") != (c.SecretAccessKey == "") {
		return Credentials{}, fmt.Errorf("set both %s and %s, or neither (for the ambient identity)", EnvAccessKeyID, EnvSecretAccessKey)
	}
	return c, nil
}

var (
	// An S3 bucket name (the rules common to AWS and the S3-compatible
	// stores): 3-63 lowercase letters, digits, '.' and '-', starting and
	// ending with a letter or digit.
	bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	// One segment of a prefix.
	prefixSegmentRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
)

// Validate says what is wrong with l, or nil.
func (l Location) Validate() error {
	var errs []error
	switch host, port, err := net.SplitHostPort(l.Endpoint); {
	case l.Endpoint == "":
		errs = append(errs, errors.New("endpoint is empty"))
	case strings.Contains(l.Endpoint, "://"):
		errs = append(errs, fmt.Errorf("endpoint %q: give host[:port] without a scheme (TLS is the default; say insecure for plain HTTP)", l.Endpoint))
	case err == nil && (host == "" || port == ""):
		errs = append(errs, fmt.Errorf("endpoint %q: empty host or port", l.Endpoint))
	case strings.ContainsAny(l.Endpoint, "/?#@ "):
		errs = append(errs, fmt.Errorf("endpoint %q: give host[:port] only", l.Endpoint))
	}
	if !bucketRE.MatchString(l.Bucket) || strings.Contains(l.Bucket, "..") {
		errs = append(errs, fmt.Errorf("bucket %q: 3-63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit", l.Bucket))
	}
	if err := validPrefix(l.Prefix); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func validPrefix(p string) error {
	if p == "" {
		return nil
	}
	for _, seg := range strings.Split(p, "/") {
		if !prefixSegmentRE.MatchString(seg) || seg == "." || seg == ".." {
			return fmt.Errorf("prefix %q: slash-separated segments of letters, digits, '.', '_' and '-' (no empty, '.' or '..' segment, no leading or trailing slash)", p)
		}
	}
	return nil
}

// URL is l as an s3:// URL, for status and messages.
func (l Location) URL() string {
	u := "s3://" + l.Bucket
	if l.Prefix != "" {
		u += "/" + l.Prefix
	}
	return u
}
