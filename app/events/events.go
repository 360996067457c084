// Package events is the hub that carries messages from Go to the UI:
// server-sent events for browsers, the Wails runtime for the desktop
// window. It is lossy by design (a slow reader loses events), so nothing
// but the UI may depend on it: features call each other directly.
package events

import (
	"sync"
)

// Event is one message from Go to the UI: progress, tokens, library
// changes. Topic names are the Wails event names too.
type Event struct {
	Topic string `json:"topic"`
	Data  any    `json:"data"`
}

// Hub fans published events out to subscribers (SSE clients) and to an
// optional sink (the Wails runtime in the desktop app). Slow subscribers
// lose events rather than block publishers: a stuck browser tab must never
// stall generation.
type Hub struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
	sink func(Event)
}

// New returns an empty hub.
func New() *Hub { return &Hub{subs: map[chan Event]struct{}{}} }

// SetSink installs fn to receive every event as well (nil to remove).
func (h *Hub) SetSink(fn func(Event)) {
	h.mu.Lock()
	h.sink = fn
	h.mu.Unlock()
}

// Publish sends an event to every subscriber without blocking.
func (h *Hub) Publish(topic string, data any) {
	ev := Event{Topic: topic, Data: data}
	h.mu.Lock()
	sink := h.sink
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
		}
	}
	h.mu.Unlock()
	if sink != nil {
		sink(ev)
	}
}

// Subscribe returns a channel of events and a func to stop receiving.
func (h *Hub) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 256)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
		h.mu.Unlock()
	}
}
