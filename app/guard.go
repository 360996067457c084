package app

import (
	"mime"
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
		if !safeMethod(req.Method) && req.Header.Get("Origin") == "" && !preflighted(req) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "request refused: a " + req.Method + " without an Origin header needs Content-Type: application/json (or an X-Hark header), so that a web page cannot forge it"})
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, req)
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// preflighted reports whether req is one a web page could only send after
// a CORS preflight, which this server never grants: it has a custom
// header, or a content type other than the three a plain HTML form (or a
// no-cors fetch) may use. A forged cross-site POST whose Origin was
// stripped therefore cannot pass.
func preflighted(req *http.Request) bool {
	if req.Header.Get("X-Hark") != "" {
		return true
	}
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch mt {
	case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
		return false
	}
	return true
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
