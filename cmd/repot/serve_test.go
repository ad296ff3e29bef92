package repot

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// A request that never finishes (an injected hang) must not turn a requested
// stop into an error: after the grace period the server closes it.
func TestServeUntilSignalClosesHungRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done() // hangs until the connection is closed
	})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveUntilSignal(ctx, srv, ln, 50*time.Millisecond) }()

	reqErr := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
		}
		reqErr <- err
	}()
	<-entered
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serveUntilSignal = %v, want nil after a requested stop", err)
	}
	if err := <-reqErr; err == nil {
		t.Fatal("the hung request got a response; want its connection closed")
	}
}

func TestServeUntilSignalReturnsServeErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // Serve fails at once on a closed listener
	if err := serveUntilSignal(context.Background(), &http.Server{}, ln, time.Second); err == nil {
		t.Fatal("want the Serve error")
	}
}
