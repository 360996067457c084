package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestStatusThroughWrapping(t *testing.T) {
	base := errors.New("no transcript 7")
	err := fmt.Errorf("export: %w", NotFound(base))
	if s, ok := Status(err); !ok || s != http.StatusNotFound {
		t.Fatalf("Status = %d, %v; want 404", s, ok)
	}
	if !errors.Is(err, base) {
		t.Fatal("the marked error no longer unwraps to its cause")
	}
	if err.Error() != "export: no transcript 7" {
		t.Fatalf("text changed: %q", err.Error())
	}
	if _, ok := Status(base); ok {
		t.Fatal("an unmarked error has a status")
	}
	for _, c := range []struct {
		err  error
		want int
	}{{BadRequest(base), 400}, {Conflict(base), 409}, {TooLarge(base), 413}} {
		if s, _ := Status(c.err); s != c.want {
			t.Errorf("%v: status %d, want %d", c.err, s, c.want)
		}
	}
}
