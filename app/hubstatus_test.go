package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The Library offers Resume on an Incomplete snapshot only when the hub
// answers (issue 17); /api/models/hub is what it asks. A hub that does not
// answer says so, naming the endpoint; one that answers is reachable.
func TestHubStatusSaysWhetherResumeCanWork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Setenv("HF_ENDPOINT", dead)
	_, srv := chatApp(t, nil)
	var hs HubInfo
	if code := getJSON(t, srv.URL+"/api/models/hub", &hs); code != 200 || hs.Reachable || hs.Endpoint != dead || !strings.Contains(hs.Reason, dead) {
		t.Fatalf("hub that does not answer: %d %+v", code, hs)
	}

	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)
	hs = HubInfo{}
	if code := getJSON(t, srv.URL+"/api/models/hub", &hs); code != 200 || !hs.Reachable || hs.Endpoint != hub.URL || hs.Reason != "" {
		t.Fatalf("hub that answers: %d %+v", code, hs)
	}
}
