package s3

import (
	"repot.dev/repot-operator/artifacts"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// DefaultPartSize is the multipart part size: objects larger than it go
// up in parts of this size, each read from disk as it is sent (minio-go's
// ReaderAt path), so memory does not grow with the object. 8 MiB is above
// S3's 5 MiB minimum.
const DefaultPartSize = 8 << 20

// Store is an S3-compatible store at a Location: the one client every
// reader and writer of artifacts uses.
type Store struct {
	Location artifacts.Location
	client   *minio.Client
	// PartSize is the multipart part size (DefaultPartSize when 0).
	PartSize uint64
}

// Options tune Open; the zero value is the default.
type Options struct {
	// Transport replaces the HTTP transport (tests inject faults with a
	// proxy instead; this is for custom CAs).
	Transport http.RoundTripper
	// MaxRetries is minio-go's per-request retry count (its default 10
	// when 0): 5xx answers and cut connections are retried with its
	// backoff before an error reaches the uploader, which then retries the
	// whole object with its own.
	MaxRetries int
}

// Open validates loc and returns a client for it. It does not contact the
// store: Probe does.
func Open(loc artifacts.Location, creds artifacts.Credentials, o Options) (*Store, error) {
	if err := loc.Validate(); err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	var c *credentials.Credentials
	if creds.AccessKeyID != "" {
		c = credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, "")
	} else {
		// The ambient identity: AWS_* variables, then IRSA's web identity
		// token or the instance metadata service (credentials.IAM reads
		// AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN itself).
		c = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.IAM{Client: &http.Client{Transport: http.DefaultTransport}},
		})
	}
	client, err := minio.New(loc.Endpoint, &minio.Options{
		Creds:      c,
		Secure:     !loc.Insecure,
		Region:     loc.Region,
		Transport:  o.Transport,
		MaxRetries: o.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", loc.Endpoint, err)
	}
	return &Store{Location: loc, client: client}, nil
}

// metaSHA256 is the user metadata key holding an object's sha256 (hex), so
// that a reader can check an object without its manifest.
const metaSHA256 = "Sha256"

// Put stores size bytes of r (an io.ReaderAt, read twice: once for the
// sha256, once to send) as key. Large objects go up in parts.
func (s *Store) Put(ctx context.Context, key string, r io.ReaderAt, size int64) (artifacts.Object, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, size)); err != nil {
		return artifacts.Object{}, fmt.Errorf("reading %s: %w", key, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	part := s.PartSize
	if part == 0 {
		part = DefaultPartSize
	}
	_, err := s.client.PutObject(ctx, s.Location.Bucket, key, io.NewSectionReader(r, 0, size), size, minio.PutObjectOptions{
		ContentType:  "application/x-ndjson",
		UserMetadata: map[string]string{metaSHA256: sum},
		PartSize:     part,
		// One part in flight: bounded memory and a runner's bandwidth left
		// to its model calls.
		NumThreads: 1,
	})
	if err != nil {
		return artifacts.Object{}, s.explain("writing "+key, err)
	}
	return artifacts.Object{Key: key, Size: size, SHA256: sum}, nil
}

// PutBytes stores b as key (manifests).
func (s *Store) PutBytes(ctx context.Context, key string, b []byte) (artifacts.Object, error) {
	return s.Put(ctx, key, bytes.NewReader(b), int64(len(b)))
}

// Get returns key's content; the caller closes it.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	obj, err := s.client.GetObject(ctx, s.Location.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.explain("reading "+key, err)
	}
	// GetObject is lazy: Stat makes the request, so a missing key is an
	// error here and not on the first Read.
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		return nil, s.explain("reading "+key, err)
	}
	return obj, nil
}

// GetBytes reads key whole, refusing more than limit bytes (manifests).
func (s *Store) GetBytes(ctx context.Context, key string, limit int64) ([]byte, error) {
	r, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, s.explain("reading "+key, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", key, limit)
	}
	return b, nil
}

// List returns the keys and sizes under prefix, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]artifacts.Object, error) {
	var out []artifacts.Object
	for o := range s.client.ListObjects(ctx, s.Location.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, s.explain("listing "+prefix, o.Err)
		}
		out = append(out, artifacts.Object{Key: o.Key, Size: o.Size})
	}
	return out, nil
}

// RemovePrefix deletes every object under prefix and returns how many.
func (s *Store) RemovePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" || !strings.HasSuffix(prefix, "/") {
		return 0, fmt.Errorf("refusing to remove %q: not a folder prefix", prefix)
	}
	objs := make(chan minio.ObjectInfo)
	// A listing that fails part way is an error too: what it did not list
	// was not removed.
	var listErr error
	go func() {
		defer close(objs)
		for o := range s.client.ListObjects(ctx, s.Location.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				listErr = s.explain("listing "+prefix, o.Err)
				return
			}
			objs <- o
		}
	}()
	n := 0
	var errs []error
	for r := range s.client.RemoveObjectsWithResult(ctx, s.Location.Bucket, objs, minio.RemoveObjectsOptions{}) {
		if r.Err != nil {
			errs = append(errs, s.explain("removing "+r.ObjectName, r.Err))
			continue
		}
		n++
	}
	// The results channel closes after objs does: listErr is set by then.
	return n, errors.Join(append(errs, listErr)...)
}

// Probe checks that the bucket exists and that these credentials may
// write, read and delete under prefix (a small object at
// PREFIX.repot-probe-NAME). The error names what failed: the endpoint, the
// bucket or the credentials.
func (s *Store) Probe(ctx context.Context, prefix, name string) error {
	// A listing, not HEAD bucket: a HEAD answer has no body, so an unknown
	// key and a missing bucket would both read as "not found".
	lctx, cancel := context.WithCancel(ctx)
	objs := s.client.ListObjects(lctx, s.Location.Bucket, minio.ListObjectsOptions{Prefix: prefix, MaxKeys: 1})
	o, ok := <-objs
	cancel()
	for range objs { // drain: the lister stops once cancelled
	}
	if ok && o.Err != nil {
		return s.explain("listing "+prefix, o.Err)
	}
	key := prefix + ".repot-probe-" + name
	if _, err := s.PutBytes(ctx, key, []byte("probe\n")); err != nil {
		return err
	}
	if _, err := s.GetBytes(ctx, key, 64); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.Location.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.explain("removing "+key, err)
	}
	return nil
}

// explain turns a client error into one that says what failed and where.
func (s *Store) explain(what string, err error) error {
	resp := minio.ToErrorResponse(err)
	where := fmt.Sprintf("%s at %s", s.Location.URL(), s.Location.Endpoint)
	switch resp.Code {
	case "":
		// Not an S3 answer: the endpoint did not answer in S3 (DNS,
		// refused connection, TLS, a timeout, or an HTTP server that is not
		// S3).
		return fmt.Errorf("%s: endpoint %s unreachable or not S3: %w", what, s.Location.Endpoint, err)
	case "NoSuchBucket":
		return fmt.Errorf("%s: bucket %q does not exist at %s", what, s.Location.Bucket, s.Location.Endpoint)
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken",
		// versitygw's name for an unknown access key:
		"XAdminUserNotFound":
		return fmt.Errorf("%s: credentials refused by %s (%s: %s)", what, where, resp.Code, resp.Message)
	case "NoSuchKey":
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s (%s): %s: %s", what, where, resp.Code, resp.Message)
}

// ErrNotFound is a missing object.
var ErrNotFound = errors.New("no such object")
