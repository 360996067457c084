package app

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// uiHandler serves the built frontend, answering unknown paths with
// index.html so client-side routes survive a reload.
func (a *App) uiHandler() http.Handler {
	if a.UI == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Error(w, "the UI was not built into this binary (run make build)", http.StatusNotFound)
		})
	}
	files := http.FileServerFS(a.UI)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := strings.TrimPrefix(path.Clean(req.URL.Path), "/")
		if p == "" {
			p = "index.html"
		}
		if _, err := fs.Stat(a.UI, p); err != nil {
			index, err := fs.ReadFile(a.UI, "index.html")
			if err != nil {
				http.Error(w, "the UI was not built into this binary (run make build)", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(index)
			return
		}
		files.ServeHTTP(w, req)
	})
}
