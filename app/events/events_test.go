package events

import "testing"

// A reader that stops reading loses events; the publisher never waits,
// and the sink and other readers still get every one.
func TestSlowReaderLosesEventsOthersDoNot(t *testing.T) {
	h := New()
	stuck, stopStuck := h.Subscribe()
	defer stopStuck()
	var sunk int
	h.SetSink(func(Event) { sunk++ })
	n := cap(stuck) + 10
	for i := range n {
		h.Publish("t", i)
		if i == cap(stuck)-1 {
			// A reader that joins now sees what follows.
			live, stopLive := h.Subscribe()
			defer stopLive()
			go func() {
				for range live {
				}
			}()
		}
	}
	if len(stuck) != cap(stuck) {
		t.Fatalf("stuck reader holds %d, want a full buffer of %d", len(stuck), cap(stuck))
	}
	if sunk != n {
		t.Fatalf("sink got %d of %d", sunk, n)
	}
	if ev := <-stuck; ev.Topic != "t" || ev.Data != 0 {
		t.Fatalf("first event %+v", ev)
	}
}

func TestUnsubscribeClosesOnce(t *testing.T) {
	h := New()
	ch, stop := h.Subscribe()
	stop()
	stop()
	if _, ok := <-ch; ok {
		t.Fatal("channel still open")
	}
	h.Publish("t", nil) // must not send on the closed channel
}
