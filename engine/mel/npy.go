package mel

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Array is a float32 n-dimensional array in C (row-major) order, as read
// from a NumPy .npy file.
type Array struct {
	Shape []int
	Data  []float32
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// maxNPYElems bounds what a header may ask us to allocate.
const maxNPYElems = 1 << 28

// ReadNPY reads a .npy file (format 1.0, 2.0 or 3.0) holding little-endian
// float32 or float64 in C order; float64 is narrowed to float32.
func ReadNPY(r io.Reader) (*Array, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: reading magic: %w", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: not a .npy file (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		hlen = int(binary.LittleEndian.Uint16(pre[8:]))
	case 2, 3:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(append(pre[8:10:10], b[:]...)))
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", pre[6], pre[7])
	}
	if hlen > 1<<16 {
		return nil, fmt.Errorf("npy: header of %d bytes", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("npy: reading header: %w", err)
	}
	h := string(hdr)
	d, f, s := npyDescr.FindStringSubmatch(h), npyFortran.FindStringSubmatch(h), npyShape.FindStringSubmatch(h)
	if d == nil || f == nil || s == nil {
		return nil, fmt.Errorf("npy: malformed header %q", strings.TrimSpace(h))
	}
	if f[1] != "False" {
		return nil, errors.New("npy: Fortran-order arrays are not supported")
	}
	a := &Array{}
	n := 1
	for _, part := range strings.Split(s[1], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, err := strconv.Atoi(part)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("npy: bad shape %q", s[1])
		}
		a.Shape = append(a.Shape, v)
		if v > 0 && n > maxNPYElems/v {
			return nil, fmt.Errorf("npy: shape %q is too large", s[1])
		}
		n *= v
	}
	var size int
	switch d[1] {
	case "<f4":
		size = 4
	case "<f8":
		size = 8
	default:
		return nil, fmt.Errorf("npy: dtype %q is not supported (want <f4 or <f8)", d[1])
	}
	raw := make([]byte, n*size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("npy: reading %d values: %w", n, err)
	}
	a.Data = make([]float32, n)
	for i := range a.Data {
		if size == 4 {
			a.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		} else {
			a.Data[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	}
	return a, nil
}

// ReadNPZ reads every array of an .npz archive (a zip of .npy files, as
// written by numpy.savez or savez_compressed), keyed by name without ".npy".
func ReadNPZ(data []byte) (map[string]*Array, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	out := map[string]*Array{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		a, err := ReadNPY(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", f.Name, err)
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = a
	}
	return out, nil
}
