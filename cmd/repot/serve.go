package repot

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"
)

// serveUntilSignal serves srv on ln until ctx ends or SIGINT/SIGTERM
// arrives. It then lets the requests in flight finish for up to grace, and
// closes whatever is still open after that (a request held by an injected
// hang, say): stopping was asked for, so that is not an error.
func serveUntilSignal(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err // never http.ErrServerClosed: nothing shut it down
	case <-ctx.Done():
	}
	drain, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(drain); err != nil {
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
