// Package s3test runs a real S3 server for tests: Versity's S3 gateway
// (bin/versitygw, built by `make s3-bin`) on a temporary directory, and a
// proxy in front of it that injects the faults a store shows in production:
// 500 answers, slow answers and connections cut in the middle of a request
// body.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
)

// TB is the part of testing.TB the helpers use, so that Ginkgo's GinkgoT()
// serves too.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
	Failed() bool
}

// Server is a running versitygw with one bucket.
type Server struct {
	// Endpoint is host:port (plain HTTP).
	Endpoint string
	Bucket   string
	Creds    artifacts.Credentials
	// Dir is the directory the posix backend stores buckets in.
	Dir string
}

// Location is the server's bucket as a Location (plain HTTP).
func (s *Server) Location() artifacts.Location {
	return artifacts.Location{Endpoint: s.Endpoint, Bucket: s.Bucket, Insecure: true, Region: "us-east-1"}
}

// Open returns a client of the server (at endpoint, when not "", for a
// proxy in front of it).
func (s *Server) Open(t TB, endpoint string) *s3.Store {
	t.Helper()
	loc := s.Location()
	if endpoint != "" {
		loc.Endpoint = endpoint
	}
	st, err := s3.Open(loc, s.Creds, s3.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Binary is bin/versitygw under the module root, or an error that says how
// to build it.
func Binary() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
	bin := filepath.Join(dir, "bin", "versitygw")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s is missing: run `make s3-bin` (hack/build-cluster-bins.sh s3) to build the S3 server the tests run", bin)
	}
	return bin, nil
}

// Start runs versitygw on a free loopback port with a new bucket, until
// the test ends. A missing binary fails the test (make test builds it).
func Start(t TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &Server{Dir: dir, Bucket: "repot-test", Creds: artifacts.Credentials{AccessKeyID: "repottest", SecretAccessKey: randomHex(20)}}
	if err := os.Mkdir(filepath.Join(dir, s.Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s.Endpoint = net.JoinHostPort("127.0.0.1", port)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--port", s.Endpoint, "posix", dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.Creds.AccessKeyID, "ROOT_SECRET_ACCESS_KEY="+s.Creds.SecretAccessKey)
	// A test process killed before its cleanups run takes the server with
	// it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	var mu sync.Mutex
	cmd.Stdout, cmd.Stderr = lockedWriter{&mu, &log}, lockedWriter{&mu, &log}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			mu.Lock()
			t.Logf("versitygw log:\n%s", log.String())
			mu.Unlock()
		}
	})
	// A bucket made as a directory before the start is the posix backend's
	// bucket; wait until the server answers for it.
	st := s.Open(t, "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := st.Probe(context.Background(), "", "start"); err == nil {
			return s
		} else if time.Now().After(deadline) {
			t.Fatalf("versitygw did not serve %s within 30s: %v", s.Bucket, err)
		}
		select {
		case <-exited:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("versitygw exited: %s", log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Fault is what the proxy does to one request.
type Fault int

const (
	// Pass forwards the request.
	Pass Fault = iota
	// InternalError answers 500 with S3's InternalError body.
	InternalError
	// Slow forwards the request after Proxy.Delay.
	Slow
	// CutBody reads half of the request body, then closes the connection
	// without an answer (a connection cut in the middle of a part).
	CutBody
	// Refuse closes the connection before reading anything (the store is
	// down).
	Refuse
)

// Proxy sits in front of a Server. Decide picks each request's fault; it
// sees the method, the path and the query (partNumber= marks a part of a
// multipart upload).
type Proxy struct {
	Endpoint string
	Delay    time.Duration

	mu     sync.Mutex
	decide func(r *http.Request) Fault
	counts map[Fault]int
	seen   []string
}

// StartProxy runs a proxy to s until the test ends; it passes everything
// until SetFaults.
func StartProxy(t TB, s *Server) *Proxy {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: s.Endpoint}
	rp := httputil.NewSingleHostReverseProxy(target)
	// The client signed the Host it dialled (the proxy's); the rewrite
	// keeps it, so the server checks the signature against that Host.
	p := &Proxy{Delay: 2 * time.Second, counts: map[Fault]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Endpoint = l.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := p.fault(r)
		switch f {
		case InternalError:
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected by s3test</Message></Error>`)
			return
		case Slow:
			select {
			case <-time.After(p.Delay):
			case <-r.Context().Done():
				return
			}
		case CutBody, Refuse:
			if f == CutBody && r.ContentLength > 0 {
				_, _ = io.CopyN(io.Discard, r.Body, r.ContentLength/2)
			}
			hj, ok := w.(http.Hijacker)
			if !ok {
				panic("s3test: no hijacker")
			}
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// SetFaults sets the decision for the requests from now on (nil: pass all).
func (p *Proxy) SetFaults(decide func(r *http.Request) Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decide = decide
}

func (p *Proxy) fault(r *http.Request) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := Pass
	if p.decide != nil {
		f = p.decide(r)
	}
	p.counts[f]++
	p.seen = append(p.seen, r.Method+" "+r.URL.RawQuery)
	return f
}

// Count is how many requests got fault f.
func (p *Proxy) Count(f Fault) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[f]
}

// Requests are the method and query of every request, in order.
func (p *Proxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// FirstN returns a decision that gives the first n requests matching
// match fault f, and passes the rest.
func FirstN(n int, f Fault, match func(r *http.Request) bool) func(r *http.Request) Fault {
	var mu sync.Mutex
	left := n
	return func(r *http.Request) Fault {
		mu.Lock()
		defer mu.Unlock()
		if left > 0 && (match == nil || match(r)) {
			left--
			return f
		}
		return Pass
	}
}

// IsPart matches the upload of one part of a multipart upload.
func IsPart(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Has("partNumber")
}

// IsPut matches any upload (an object or a part).
func IsPut(r *http.Request) bool { return r.Method == http.MethodPut }
