package safetensors

import "fmt"

// OpenBytes reads a safetensors image already in memory (a file embedded
// in the binary, say) with the same header checks as Open. name is used in
// errors. data must not change while the File is in use; Close does not
// free it.
func OpenBytes(name string, data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%s: %d bytes, too short for the 8-byte header length", name, len(data))
	}
	hdr, err := parseHeader(name, data, int64(len(data)))
	if err != nil {
		return nil, err
	}
	return &File{path: name, hdr: hdr, data: data, unmap: func() error { return nil }}, nil
}
