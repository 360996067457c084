// Package vad is voice activity detection with Silero VAD v6, run on the mlx
// API: the weights (MIT, see LICENSE-silero-vad) ship inside the binary as
// silero_vad_v6.safetensors, converted from faster-whisper's ONNX file by
// cmd/sileroconv (go generate). Scorer gives one speech probability per 512
// samples (32 ms) of 16 kHz audio, matching onnxruntime within 1e-4;
// Regions turns them into speech spans with faster-whisper's rules; Map
// takes times on the speech-only timeline back to the recording's.
package vad
