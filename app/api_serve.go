package app

import (
	"context"
	"net/http"

	"hark/app/openai"
)

// DesktopAPIAddr is where the desktop app serves the /v1 API, the port
// hark serve uses by default.
const DesktopAPIAddr = "127.0.0.1:8734"

// ServeAPI serves the /v1 API alone (no UI) on the loopback addr until ctx
// ends or the App closes: the desktop window uses it so that the OpenAI
// SDKs reach the models it has. A busy port (hark serve running) is logged,
// not fatal. It returns the address served, or "".
func (a *App) ServeAPI(ctx context.Context, addr string) string {
	ln, err := Listen(addr)
	if err != nil {
		a.Log.Warn("the /v1 API is not served", "addr", addr, "err", err)
		return ""
	}
	api := a.apiHandler()
	srv := &http.Server{
		Handler: recoverPanics(a.Log, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if isAPIPath(req.URL.Path) {
				api.ServeHTTP(w, req)
				return
			}
			openai.WriteError(w, &openai.Error{Status: http.StatusNotFound, Message: "this port serves only the API under /v1; the UI is in the Hark window", Type: "invalid_request_error", Code: "unknown_url"})
		})),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
	}
	go srv.Serve(ln)
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	a.OnClose(func() error { stop(); return srv.Close() })
	a.Log.Info("serving the /v1 API", "addr", ln.Addr().String())
	return ln.Addr().String()
}
