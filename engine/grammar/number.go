package grammar

import (
	"math"
	"strconv"
)

// Numbers are written as -?(0|[1-9][0-9]*)(\.[0-9]+)? with at most
// maxIntDigits integer and maxFracDigits decimal digits, and no exponent:
// a subset of JSON numbers that float64 (and so JavaScript) reads exactly
// enough for minimum/maximum to be checked on the text being written.
const (
	maxIntDigits  = 15
	maxFracDigits = 9
	numCap        = 1 + maxIntDigits + 1 + maxFracDigits
)

type numParts struct {
	neg      bool
	ip, fp   []byte
	dot      bool
	complete bool // a whole number as it stands
}

// numSyntax checks that p can begin a number of n's kind.
func numSyntax(p []byte, integer bool) (numParts, bool) {
	var r numParts
	i := 0
	if i < len(p) && p[i] == '-' {
		r.neg = true
		i++
	}
	s := i
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	r.ip = p[s:i]
	if len(r.ip) > maxIntDigits || (len(r.ip) > 1 && r.ip[0] == '0') {
		return r, false
	}
	if i < len(p) && p[i] == '.' {
		if integer || len(r.ip) == 0 {
			return r, false
		}
		r.dot = true
		i++
		s = i
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
		r.fp = p[s:i]
		if len(r.fp) > maxFracDigits {
			return r, false
		}
	}
	if i != len(p) {
		return r, false
	}
	// "-0" is a valid JSON number, but equal to 0 and so a trap for
	// exclusive checks: only "-0.x" is written.
	if r.neg && string(r.ip) == "0" && integer {
		return r, false
	}
	r.complete = len(r.ip) != 0 && (!r.dot || len(r.fp) != 0) && !(r.neg && string(r.ip) == "0" && !r.dot)
	return r, true
}

// numEnd reports whether p is a finished number within n's bounds, judged
// on the float64 the text parses to, as a validator would.
func numEnd(p []byte, n *node) bool {
	r, ok := numSyntax(p, n.integer)
	if !ok || !r.complete {
		return false
	}
	v, err := strconv.ParseFloat(string(p), 64)
	return err == nil && v >= n.lo && v <= n.hi && !(r.neg && v == 0)
}

// numOK reports whether p can still become a number within n's bounds.
func numOK(p []byte, n *node) bool {
	r, ok := numSyntax(p, n.integer)
	if !ok {
		return false
	}
	if math.IsInf(n.lo, -1) && math.IsInf(n.hi, 1) {
		return true
	}
	return numWithin(r, n, numCap)
}

// numDist is the fewest bytes that finish p (infinite: none).
func numDist(p []byte, n *node) int {
	if numEnd(p, n) {
		return 0
	}
	r, ok := numSyntax(p, n.integer)
	if !ok {
		return infinite
	}
	for d := 1; d <= numCap; d++ {
		if numWithin(r, n, d) {
			return d
		}
	}
	return infinite
}

// numSize is the length of the shortest number n allows.
func numSize(n *node) int { return numDist(nil, n) }

// numWithin reports whether r can be finished with at most d more bytes
// into a value in [n.lo, n.hi]. Magnitudes are searched on decimal grids
// (f decimals), by interval arithmetic rather than enumeration.
func numWithin(r numParts, n *node, d int) bool {
	if !r.neg && len(r.ip) == 0 && d >= 1 && numWithin(numParts{neg: true}, n, d-1) {
		return true // the empty prefix may still take a minus sign
	}
	lo, hi := n.lo, n.hi
	if r.neg {
		lo, hi = -n.hi, -n.lo
	}
	maxF := maxFracDigits
	if n.integer {
		maxF = 0
	}
	// fits reports a grid point of 10^-f in [a, b) (b < 0: the point a
	// only) inside [lo, hi], positive when negative.
	fits := func(a, b float64, f int) bool {
		s := math.Pow10(f)
		c := math.Ceil(math.Max(a, lo)*s-1e-6) / s
		if c < a {
			c = a
		}
		if r.neg && c == 0 {
			c = 1 / s
		}
		if b < 0 {
			return c == a && c >= lo-1e-12 && c <= hi
		}
		// a and b lie on the grid: compare with half a step of slack so
		// float error (0.2+0.1 > 0.3) cannot admit b itself.
		return c <= hi && c < b-0.5/s
	}
	cost := func(f int) int { // bytes of a fraction of f digits
		if f == 0 {
			return 0
		}
		return 1 + f
	}
	switch {
	case len(r.ip) == 0:
		used := 0
		for k := 1; k <= maxIntDigits; k++ {
			a, b := math.Pow10(k-1), math.Pow10(k)
			if k == 1 {
				a = 0
			}
			for f := 0; f <= maxF; f++ {
				if used+k+cost(f) <= d && fits(a, b, f) {
					return true
				}
			}
		}
		return false
	case !r.dot:
		ip, _ := strconv.ParseFloat(string(r.ip), 64)
		for k := 0; k <= maxIntDigits-len(r.ip); k++ {
			if k > 0 && string(r.ip) == "0" {
				break
			}
			p := math.Pow10(k)
			for f := 0; f <= maxF; f++ {
				if k+cost(f) > d {
					continue
				}
				if k == 0 && f == 0 {
					if !r.neg || ip != 0 {
						if ip >= lo && ip <= hi {
							return true
						}
					}
					continue
				}
				if fits(ip*p, (ip+1)*p, f) {
					return true
				}
			}
		}
		return false
	}
	base, _ := strconv.ParseFloat(string(r.ip)+"."+string(r.fp)+"0", 64)
	width := math.Pow10(-len(r.fp))
	for f := 0; len(r.fp)+f <= maxF && f <= d; f++ {
		if len(r.fp)+f == 0 {
			continue
		}
		if f == 0 {
			if base >= lo && base <= hi && !(r.neg && base == 0) {
				return true
			}
			continue
		}
		if fits(base, base+width, len(r.fp)+f) {
			return true
		}
	}
	return false
}
