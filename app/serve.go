package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// LoopbackAddr reports whether addr (host:port) is a loopback address.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopbackHost(host)
}

// ListenShared opens a listener on any address, for hark serve with an API
// key: the /v1 routes then need the key, and the UI still answers only to
// a loopback Host.
func ListenShared(addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("address %q: %w", addr, err)
	}
	return net.Listen("tcp", addr)
}

// Listen opens a loopback listener; any other address is refused because
// the UI has no authentication beyond being local.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", addr, err)
	}
	if !loopbackHost(host) {
		return nil, fmt.Errorf("address %q is not loopback: Hark serves only on 127.0.0.1, ::1 or localhost", addr)
	}
	return net.Listen("tcp", addr)
}

// Server timeouts: a client that stops sending mid-request, or holds an
// idle connection open, must not hold a goroutine and a socket for ever.
// The read timeout covers a whole request, uploads of large audio files
// included; there is no write timeout because the event stream (SSE) is
// one response that lasts as long as the page. Variables for tests.
var (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 10 * time.Minute
	idleTimeout       = 2 * time.Minute
)

// Serve serves the UI and API on ln until ctx is cancelled.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
