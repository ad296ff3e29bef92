package s3_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repot.dev/repot-operator/artifacts/s3"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3test"
)

const uid = "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"

var layout = artifacts.Layout{Prefix: "evals", Namespace: "research", Evaluation: "demo", UID: uid}

// shardFile is a runner's traces file that a test appends to.
type shardFile struct {
	t     *testing.T
	path  string
	lines []string
}

func newShardFile(t *testing.T) *shardFile {
	return &shardFile{t: t, path: filepath.Join(t.TempDir(), "traces.jsonl")}
}

// add appends n trace lines, each of about size bytes.
func (f *shardFile) add(n, size int) {
	f.t.Helper()
	fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	for range n {
		pad := make([]byte, max(0, size-60)/2)
		_, _ = rand.Read(pad)
		line := fmt.Sprintf(`{"problem_id":"p%04d","pad":"%s"}`, len(f.lines), hex.EncodeToString(pad))
		f.lines = append(f.lines, line)
		if _, err := fh.WriteString(line + "\n"); err != nil {
			f.t.Fatal(err)
		}
	}
}

// addPartial appends a line without its newline (a write in progress).
func (f *shardFile) addPartial(s string) {
	f.t.Helper()
	fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(s); err != nil {
		f.t.Fatal(err)
	}
}

func uploader(st *s3.Store, shard int, path string) *s3.ShardUploader {
	return &s3.ShardUploader{
		Store: st, Layout: layout, Shard: artifacts.Shard{Model: "m", Index: shard}, Path: path,
		StatePath:  filepath.Join(filepath.Dir(path), "artifacts.state"),
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	}
}

// shardsUpTo is model m's shards 0..n-1.
func shardsUpTo(n int) []artifacts.Shard {
	var out []artifacts.Shard
	for i := range n {
		out = append(out, artifacts.Shard{Model: "m", Index: i})
	}
	return out
}

// stored reads every trace line of the evaluation back through its
// manifests, checking sizes and sha256.
func stored(t *testing.T, st *s3.Store, shards int) (artifacts.Manifest, []string) {
	t.Helper()
	m, err := s3.Collect(context.Background(), st, layout, shardsUpTo(shards))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := s3.Traces(context.Background(), st, m, func(b []byte) error {
		lines = append(lines, string(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m, lines
}

func TestUploaderStreamsSegmentsAndManifest(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Open(t, "")
	ctx := context.Background()
	f := newShardFile(t)
	u := uploader(st, 0, f.path)

	// Nothing written yet: nothing to upload, no error.
	if err := u.Sync(ctx); err != nil {
		t.Fatalf("Sync before any trace: %v", err)
	}
	f.add(3, 500)
	f.addPartial(`{"problem_id":"half`)
	if err := u.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The line being written stays behind until it is complete.
	if p := u.Progress(); p.Objects != 1 || p.PendingBytes != int64(len(`{"problem_id":"half`)) {
		t.Errorf("after the first Sync: %+v, want 1 object and the partial line pending", p)
	}
	f.addPartial(`"}` + "\n")
	f.lines = append(f.lines, `{"problem_id":"half"}`)
	f.add(2, 500)
	if err := u.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := u.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Final || p.Objects != 2 || p.PendingBytes != 0 || p.LostBytes != 0 {
		t.Errorf("Finish progress = %+v, want final, 2 objects, nothing pending or lost", p)
	}
	m, lines := stored(t, st, 1)
	if diff := cmp.Diff(f.lines, lines); diff != "" {
		t.Errorf("stored traces (-written +stored):\n%s", diff)
	}
	if !m.Complete || m.Objects != 2 {
		t.Errorf("manifest: complete=%v objects=%d, want complete with 2", m.Complete, m.Objects)
	}
	if got := []int{m.Shards[0].Objects[0].Lines, m.Shards[0].Objects[1].Lines}; !cmp.Equal(got, []int{3, 3}) {
		t.Errorf("lines per segment = %v, want [3 3]", got)
	}
}

func TestUploaderResumedShardAppends(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Open(t, "")
	ctx := context.Background()

	// The first pod uploads two segments, then is killed (no Finish).
	first := newShardFile(t)
	u1 := uploader(st, 2, first.path)
	first.add(2, 300)
	if err := u1.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	first.add(1, 300)
	if err := u1.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	// The next pod has a new, empty emptyDir: its file starts over.
	second := newShardFile(t)
	u2 := uploader(st, 2, second.path)
	second.add(2, 300)
	if _, err := u2.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	m, lines := stored(t, st, 3)
	want := append(append([]string{}, first.lines...), second.lines...)
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("stored traces after a resume (-want +got):\n%s", diff)
	}
	var keys []string
	for _, o := range m.Shards[2].Objects {
		keys = append(keys, o.Key)
	}
	s2 := artifacts.Shard{Model: "m", Index: 2}
	wantKeys := []string{layout.SegmentKey(s2, 1), layout.SegmentKey(s2, 2), layout.SegmentKey(s2, 3)}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("segments (-want +got):\n%s", diff)
	}
	// Shards 0 and 1 never started: the evaluation is not complete.
	if m.Complete {
		t.Errorf("manifest complete with two shards missing")
	}
}

func TestUploaderRestartedSidecarDoesNotUploadTwice(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Open(t, "")
	ctx := context.Background()
	f := newShardFile(t)
	f.add(4, 200)
	if err := uploader(st, 0, f.path).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The sidecar container restarts in the same pod: same file, same
	// state file, a new process.
	f.add(1, 200)
	if _, err := uploader(st, 0, f.path).Finish(ctx); err != nil {
		t.Fatal(err)
	}
	_, lines := stored(t, st, 1)
	if diff := cmp.Diff(f.lines, lines); diff != "" {
		t.Errorf("stored traces (-written +stored):\n%s", diff)
	}
}

func TestUploaderLargeSegmentGoesUpInParts(t *testing.T) {
	srv := s3test.Start(t)
	proxy := s3test.StartProxy(t, srv)
	st := srv.Open(t, proxy.Endpoint)
	st.PartSize = 5 << 20
	f := newShardFile(t)
	f.add(12, 1<<20) // 12 MiB: three parts of 5 MiB
	u := uploader(st, 0, f.path)
	if _, err := u.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	parts := 0
	for _, r := range proxy.Requests() {
		if strings.HasPrefix(r, "PUT ") && strings.Contains(r, "partNumber=") {
			parts++
		}
	}
	if parts != 3 {
		t.Errorf("%d part uploads, want 3 (requests: %v)", parts, proxy.Requests())
	}
	_, lines := stored(t, srv.Open(t, ""), 1)
	if diff := cmp.Diff(f.lines, lines); diff != "" {
		t.Errorf("stored traces differ from the written ones")
	}
}

func TestUploaderSurvivesFaults(t *testing.T) {
	cases := []struct {
		name   string
		faults func(*s3test.Proxy) func(*http.Request) s3test.Fault
		// want is the fault the proxy must have injected at least once.
		want s3test.Fault
		size int
	}{
		{"500s on the first uploads", func(*s3test.Proxy) func(*http.Request) s3test.Fault {
			return s3test.FirstN(3, s3test.InternalError, s3test.IsPut)
		}, s3test.InternalError, 400},
		{"slow answers", func(p *s3test.Proxy) func(*http.Request) s3test.Fault {
			p.Delay = 1500 * time.Millisecond
			return s3test.FirstN(2, s3test.Slow, nil)
		}, s3test.Slow, 400},
		{"connection cut mid-part", func(*s3test.Proxy) func(*http.Request) s3test.Fault {
			return s3test.FirstN(1, s3test.CutBody, s3test.IsPart)
		}, s3test.CutBody, 1 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := s3test.Start(t)
			proxy := s3test.StartProxy(t, srv)
			st := srv.Open(t, proxy.Endpoint)
			st.PartSize = 5 << 20
			f := newShardFile(t)
			u := uploader(st, 0, f.path)
			proxy.SetFaults(tc.faults(proxy))
			f.add(11, tc.size)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// The uploader's own retries, with backoff, come on top of
			// the client's: Sync until it succeeds, as the sidecar's
			// polls do.
			for {
				err := u.Sync(ctx)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("Sync did not succeed within a minute: %v", err)
				}
				time.Sleep(60 * time.Millisecond)
			}
			if proxy.Count(tc.want) == 0 {
				t.Fatalf("the proxy injected no fault (requests: %v)", proxy.Requests())
			}
			if _, err := u.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			_, lines := stored(t, srv.Open(t, ""), 1)
			if diff := cmp.Diff(f.lines, lines); diff != "" {
				t.Errorf("stored traces differ from the written ones (%d written, %d stored)", len(f.lines), len(lines))
			}
		})
	}
}

func TestUploaderOutageSpillsAndRecovers(t *testing.T) {
	srv := s3test.Start(t)
	proxy := s3test.StartProxy(t, srv)
	st := srv.Open(t, proxy.Endpoint)
	ctx := context.Background()
	f := newShardFile(t)
	u := uploader(st, 0, f.path)
	u.MinBackoff, u.MaxBackoff = time.Hour, time.Hour
	f.add(2, 300)
	if err := u.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	// The store goes down: the traces wait in the file.
	proxy.SetFaults(func(*http.Request) s3test.Fault { return s3test.Refuse })
	f.add(3, 300)
	if err := u.Sync(ctx); err == nil {
		t.Fatal("Sync succeeded with the store down")
	}
	p := u.Progress()
	if p.PendingBytes == 0 || p.LastError == "" {
		t.Errorf("during the outage: %+v, want pending bytes and the last error", p)
	}
	// While backing off, Sync does not contact the store.
	before := len(proxy.Requests())
	if err := u.Sync(ctx); err == nil || !strings.Contains(err.Error(), "retrying at") {
		t.Errorf("Sync while backing off = %v, want the backoff and the last error", err)
	}
	if after := len(proxy.Requests()); after != before {
		t.Errorf("Sync while backing off made %d requests", after-before)
	}

	// The store comes back: Finish uploads the spill in one segment.
	proxy.SetFaults(nil)
	if _, err := u.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	m, lines := stored(t, srv.Open(t, ""), 1)
	if diff := cmp.Diff(f.lines, lines); diff != "" {
		t.Errorf("stored traces (-written +stored):\n%s", diff)
	}
	if !m.Complete || m.Objects != 2 {
		t.Errorf("manifest: complete=%v objects=%d, want complete with 2 segments", m.Complete, m.Objects)
	}
}

func TestUploaderCountsWhatIsLost(t *testing.T) {
	srv := s3test.Start(t)
	proxy := s3test.StartProxy(t, srv)
	st := srv.Open(t, proxy.Endpoint)
	f := newShardFile(t)
	u := uploader(st, 0, f.path)
	f.add(2, 300)
	if err := u.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.add(2, 300)
	stat, _ := os.Stat(f.path)
	lost := stat.Size() - u.Progress().Bytes
	// Down for good, except the final manifest, which the proxy lets
	// through once the data uploads have failed: the shard is final and
	// says what it lost.
	proxy.SetFaults(func(r *http.Request) s3test.Fault {
		if strings.HasSuffix(r.URL.Path, "manifest.json") {
			return s3test.Pass
		}
		return s3test.Refuse
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p, err := u.Finish(ctx)
	if err == nil || !strings.Contains(err.Error(), "not uploaded") {
		t.Errorf("Finish = %v, want an error saying what was not uploaded", err)
	}
	if !p.Final || p.LostBytes != lost {
		t.Errorf("Finish progress = %+v, want final with %d bytes lost", p, lost)
	}
	m, err := s3.Collect(context.Background(), srv.Open(t, ""), layout, shardsUpTo(1))
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || m.LostBytes != lost {
		t.Errorf("manifest complete=%v lost=%d, want partial with %d lost", m.Complete, m.LostBytes, lost)
	}
}

func TestTracesRefusesAChangedObject(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Open(t, "")
	ctx := context.Background()
	f := newShardFile(t)
	f.add(2, 200)
	if _, err := uploader(st, 0, f.path).Finish(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := s3.Collect(ctx, st, layout, shardsUpTo(1))
	if err != nil {
		t.Fatal(err)
	}
	// Someone with write access to the bucket replaces the segment.
	forged := []byte(`{"problem_id":"forged"}` + "\n")
	if _, err := st.PutBytes(ctx, m.Shards[0].Objects[0].Key, forged); err != nil {
		t.Fatal(err)
	}
	err = s3.Traces(ctx, st, m, func([]byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "the manifest says") {
		t.Errorf("Traces over a replaced object = %v, want a size or sha256 mismatch", err)
	}
}

func TestProbeSaysWhatFailed(t *testing.T) {
	srv := s3test.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Open(t, "").Probe(ctx, layout.EvaluationPrefix(), "ok"); err != nil {
		t.Fatalf("probe of a good store: %v", err)
	}
	closed := unusedAddr(t)
	cases := []struct {
		name string
		loc  func() artifacts.Location
		cred artifacts.Credentials
		want string
	}{
		{"wrong secret", srv.Location, artifacts.Credentials{AccessKeyID: srv.Creds.AccessKeyID, SecretAccessKey: "wrong"}, "credentials refused"},
		{"unknown key", srv.Location, artifacts.Credentials{AccessKeyID: "nobody", SecretAccessKey: "wrong"}, "credentials refused"},
		{"missing bucket", func() artifacts.Location { l := srv.Location(); l.Bucket = "no-such-bucket"; return l }, srv.Creds, `bucket "no-such-bucket" does not exist`},
		{"nothing listening", func() artifacts.Location { l := srv.Location(); l.Endpoint = closed; return l }, srv.Creds, "unreachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := s3.Open(tc.loc(), tc.cred, s3.Options{MaxRetries: 1})
			if err != nil {
				t.Fatal(err)
			}
			err = st.Probe(ctx, layout.EvaluationPrefix(), "t")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Probe = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// unusedAddr is a loopback address nothing listens on.
func unusedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
