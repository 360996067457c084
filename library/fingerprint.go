package library

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// ConfigFingerprint is the config fingerprint of a config.json: the file is
// parsed and re-serialized canonically, then hashed:
//
//   - objects: keys sorted by their UTF-8 bytes, a later duplicate key
//     replacing an earlier one;
//   - no whitespace outside strings;
//   - strings: JSON-escaped with only the mandatory escapes (quote,
//     backslash, control characters) and no HTML escaping; invalid UTF-8
//     becomes U+FFFD;
//   - numbers by value: an integer literal (no fraction or exponent) is
//     written in decimal without sign for zero; any other number as the
//     shortest decimal that round-trips its float64 value, with integral
//     values written as integers (so 1.0, 1e0 and 1 agree, and 1e-05 and
//     0.00001 agree), other values as Go's strconv.FormatFloat(v, 'g', -1,
//     64) writes them (1e-05, 0.02); values beyond float64 range keep
//     their literal, lowercased;
//   - true, false, null as themselves.
//
// The fingerprint is the first 16 hex digits of the sha256 of that text.
// Reformatting, reindenting or reordering keys leaves it unchanged; any
// change of a value changes it.
func ConfigFingerprint(data []byte) (string, error) {
	canon, err := CanonicalJSON(data)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])[:16], nil
}

// CanonicalJSON returns the canonical form ConfigFingerprint hashes.
func CanonicalJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not valid JSON: trailing data after the value")
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case json.Number:
		s, err := canonicalNumber(string(x))
		if err != nil {
			return err
		}
		b.WriteString(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value %T", v)
	}
	return nil
}

func canonicalNumber(s string) (string, error) {
	if !strings.ContainsAny(s, ".eE") {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("bad number %q", s)
		}
		return n.String(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return "", fmt.Errorf("bad number %q", s)
	}
	if math.IsInf(f, 0) {
		// Out of float64 range: keep the literal, lowercased, as the value.
		return strings.ToLower(s), nil
	}
	if f == 0 {
		return "0", nil // -0.0 and 0.0 are the same value
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return new(big.Float).SetFloat64(f).Text('f', 0), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

const hexDigits = "0123456789abcdef"

func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20:
			switch r {
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[r>>4])
				b.WriteByte(hexDigits[r&0xf])
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
