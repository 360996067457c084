package engine

import "strings"

// newStopper ignores empty stop strings, which would match at once.
func newStopper(stops []string) *stopper {
	s := &stopper{}
	for _, st := range stops {
		if st != "" {
			s.stops = append(s.stops, st)
		}
	}
	return s
}

// stopper holds generated text back while it might be the start of a stop
// string, so a stop string is never shown, not even in part.
type stopper struct {
	stops   []string
	text    strings.Builder // everything generated so far
	emitted int             // bytes of text already released
	hit     bool            // a stop string was found
}

// add appends a text delta and returns what can be shown now, and whether a
// stop string was completed (the text before it is then the final text).
func (s *stopper) add(delta string) (out string, stopped bool) {
	start := s.emitted
	s.text.WriteString(delta)
	full := s.text.String()
	// A stop string may begin in text held back earlier, never in text
	// already shown: heldSuffix keeps back any tail that could start one.
	cut := -1
	for _, st := range s.stops {
		if i := strings.Index(full[start:], st); i >= 0 && (cut < 0 || start+i < cut) {
			cut = start + i
		}
	}
	if cut >= 0 {
		out = full[s.emitted:cut]
		s.emitted = len(full)
		s.hit = true
		return out, true
	}
	release := len(full) - s.heldSuffix(full)
	if release <= s.emitted {
		return "", false
	}
	out = full[s.emitted:release]
	s.emitted = release
	return out, false
}

// flush releases the held-back text at the end of generation.
func (s *stopper) flush() string {
	full := s.text.String()
	out := full[s.emitted:]
	s.emitted = len(full)
	return out
}

// heldSuffix is the length of the longest suffix of full that is a proper
// prefix of some stop string.
func (s *stopper) heldSuffix(full string) int {
	best := 0
	for _, st := range s.stops {
		for n := min(len(st)-1, len(full)); n > best; n-- {
			if strings.HasSuffix(full, st[:n]) {
				best = n
				break
			}
		}
	}
	return best
}
