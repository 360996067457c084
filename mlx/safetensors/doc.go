// Package safetensors reads and writes the safetensors tensor file format
// used by Hugging Face and MLX checkpoints, including sharded checkpoints
// described by a model.safetensors.index.json.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON mapping
// tensor names to {dtype, shape, data_offsets} (plus an optional
// "__metadata__" map of strings), then the raw little-endian tensor data;
// data_offsets are relative to the end of the header.
//
// Files are memory-mapped where the platform allows and read into memory
// elsewhere. Tensor data is touched lazily: Tensor only returns the parsed
// header entry; View aliases the mapping, Bytes and Float32s copy. MLX
// writes the JSON header compact and unpadded, so tensor data may start at
// an odd offset; every accessor copies or decodes byte-wise and never casts
// the mapping to a wider element type.
package safetensors
