package app

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guard rejects requests that did not come from our own page: a Host that
// is not a loopback name (DNS rebinding: evil.example resolving to
// 127.0.0.1) or an Origin other than the server's own (a cross-site page
// calling the API from the user's browser).
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !loopbackHost(req.Host) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden host " + req.Host + ": Hark only answers on localhost"})
			return
		}
		if origin := req.Header.Get("Origin"); origin != "" && !sameOrigin(origin, req.Host) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden origin " + origin})
			return
		}
		// Fetch metadata catches cross-site requests from browsers that
		// omit Origin on simple GETs.
		if site := req.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "cross-site request refused"})
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, req)
	})
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
