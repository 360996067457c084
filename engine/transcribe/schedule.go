package transcribe

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxTemperatures bounds a fallback schedule: each entry can cost a full
// decode of a window, so a long list is a way to stall a queue.
const MaxTemperatures = 10

// ParseTemperatures reads a fallback schedule written as "0,0.2,0.4"
// (the CLI's --temperatures, the upload API's ?temperatures=).
func ParseTemperatures(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("temperature %q is not a number", f)
		}
		out = append(out, v)
	}
	return out, CheckTemperatures(out)
}

// CheckTemperatures says what is wrong with a fallback schedule: it needs
// one to MaxTemperatures entries, each between 0 and 1, rising (a retry at
// a lower temperature would repeat a rejected attempt's conditions).
func CheckTemperatures(ts []float64) error {
	switch {
	case len(ts) == 0:
		return fmt.Errorf("the temperature schedule is empty (want e.g. 0,0.2,0.4)")
	case len(ts) > MaxTemperatures:
		return fmt.Errorf("the temperature schedule has %d entries; at most %d", len(ts), MaxTemperatures)
	}
	for i, t := range ts {
		if math.IsNaN(t) || t < 0 || t > 1 {
			return fmt.Errorf("temperature %v: want 0 to 1", t)
		}
		if i > 0 && t <= ts[i-1] {
			return fmt.Errorf("temperatures must rise: %v after %v", t, ts[i-1])
		}
	}
	return nil
}

// CheckThresholds says what is wrong with the three thresholds of Options
// (NaN, OpenAI's None, disables one): no-speech is a probability, the
// average log probability is at most 0, a gzip ratio is positive.
func CheckThresholds(noSpeech, logProb, compression float64) error {
	switch {
	case !math.IsNaN(noSpeech) && !(noSpeech >= 0 && noSpeech <= 1):
		return fmt.Errorf("no-speech threshold %v: want a probability between 0 and 1", noSpeech)
	case !math.IsNaN(logProb) && !(logProb <= 0 && !math.IsInf(logProb, 0)):
		return fmt.Errorf("log probability threshold %v: want a number at most 0 (OpenAI's default is -1)", logProb)
	case !math.IsNaN(compression) && !(compression > 0 && !math.IsInf(compression, 0)):
		return fmt.Errorf("compression ratio threshold %v: want a positive number (OpenAI's default is 2.4)", compression)
	}
	return nil
}
