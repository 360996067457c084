package app

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A cross-site form or no-cors fetch can POST without an Origin header
// (privacy settings, some redirects); such a request must not change state.
func TestStateChangeWithoutOriginNeedsPreflight(t *testing.T) {
	_, srv := chatApp(t, nil)
	body := `{"modelRoots":[],"backend":"cpu"}`
	for _, ct := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		hdr := map[string]string{"X-Hark": ""}
		if ct != "" {
			hdr["Content-Type"] = ct
		}
		if code, b := do(t, "PUT", srv.URL+"/api/settings", body, hdr); code != 403 || !strings.Contains(b, "Content-Type: application/json") {
			t.Errorf("content type %q: %d %s", ct, code, b)
		}
	}
	var s struct{ Backend string }
	if getJSON(t, srv.URL+"/api/settings", &s); s.Backend != "auto" {
		t.Fatalf("a refused request changed the settings: %+v", s)
	}
	// What the app and scripts send passes.
	if code, b := do(t, "PUT", srv.URL+"/api/settings", body, map[string]string{"Content-Type": "application/json"}); code != 200 {
		t.Errorf("json: %d %s", code, b)
	}
	if code, b := do(t, "POST", srv.URL+"/api/chats", "{}", map[string]string{"X-Hark": "1"}); code != 200 {
		t.Errorf("X-Hark without a body: %d %s", code, b)
	}
	// Same-origin browsers send Origin, which the origin check covers.
	if code, b := do(t, "POST", srv.URL+"/api/chats", "{}", map[string]string{"Origin": srv.URL}); code != 200 {
		t.Errorf("same origin: %d %s", code, b)
	}
}

// A client that stops sending mid-request, or idles on a keep-alive
// connection, is disconnected.
func TestServerTimeouts(t *testing.T) {
	saved := [2]time.Duration{readTimeout, idleTimeout}
	readTimeout, idleTimeout = 300*time.Millisecond, 300*time.Millisecond
	defer func() { readTimeout, idleTimeout = saved[0], saved[1] }()
	a, _ := chatApp(t, nil)
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()

	closed := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err := io.Copy(io.Discard, c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%s: the server kept the connection open", what)
		}
	}
	// A body promised and never sent.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "PUT /api/settings HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	closed(c, "stalled body")

	// An idle keep-alive connection after one request.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "GET /api/info HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("first request: %v %v", res, err)
	}
	io.Copy(io.Discard, res.Body)
	closed(c2, "idle connection")
}
