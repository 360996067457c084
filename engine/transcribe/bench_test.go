package transcribe

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/engine/audio"
	"hark/engine/mel"
	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/whisper"
)

// memSource is an in-memory safetensors.Source of float32 tensors, shown
// as float16 when half is set (the dtype of the published Whisper
// checkpoints, which the CPU backend keeps 16-bit).
type memSource struct {
	names  []string
	shapes map[string][]int
	data   map[string][]float32
	half   bool
}

func (s *memSource) Names() []string { return s.names }
func (s *memSource) Tensor(n string) (safetensors.Info, error) {
	sh, ok := s.shapes[n]
	if !ok {
		return safetensors.Info{}, fmt.Errorf("%s: %w", n, safetensors.ErrNotFound)
	}
	if s.half {
		return safetensors.Info{Name: n, DType: safetensors.F16, Shape: sh, Size: int64(2 * len(s.data[n]))}, nil
	}
	return safetensors.Info{Name: n, DType: safetensors.F32, Shape: sh, Size: int64(4 * len(s.data[n]))}, nil
}
func (s *memSource) View(n string) ([]byte, error) { return s.Bytes(n) }
func (s *memSource) Bytes(n string) ([]byte, error) {
	if !s.half {
		return safetensors.Float32Bytes(s.data[n]), nil
	}
	b := make([]byte, 2*len(s.data[n]))
	for i, v := range s.data[n] {
		binary.LittleEndian.PutUint16(b[2*i:], mlx.F32ToF16(v))
	}
	return b, nil
}
func (s *memSource) Float32s(n string) ([]float32, error) {
	if _, ok := s.data[n]; !ok {
		return nil, fmt.Errorf("%s: %w", n, safetensors.ErrNotFound)
	}
	return s.data[n], nil
}
func (s *memSource) Close() error { return nil }

// randomWhisper builds a Whisper of the given dims with random weights in
// the mlx-community layout, stored as float16 when half is set.
func randomWhisper(d whisper.Dims, half bool) (*whisper.Model, error) {
	return whisper.FromSource(&whisper.Config{Dims: d, LayerNormEps: 1e-5}, randomWhisperSource(d, half))
}

// randomWhisperSource is randomWhisper's tensors.
func randomWhisperSource(d whisper.Dims, half bool) *memSource {
	src := &memSource{shapes: map[string][]int{}, data: map[string][]float32{}, half: half}
	rng := rand.New(rand.NewSource(1))
	add := func(name string, scale float64, shape ...int) {
		n := 1
		for _, x := range shape {
			n *= x
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * scale)
		}
		if strings.HasSuffix(name, "ln.weight") || strings.HasSuffix(name, "ln_post.weight") {
			for i := range v {
				v[i] += 1
			}
		}
		src.names = append(src.names, name)
		src.shapes[name], src.data[name] = shape, v
	}
	w := d.AudioState
	block := func(p string, cross bool) {
		attn := []string{p + ".attn"}
		if cross {
			attn = append(attn, p+".cross_attn")
		}
		for _, a := range attn {
			for _, l := range []string{"query", "key", "value", "out"} {
				add(a+"."+l+".weight", 0.02, w, w)
				if l != "key" {
					add(a+"."+l+".bias", 0.02, w)
				}
			}
			add(a+"_ln.weight", 0.02, w)
			add(a+"_ln.bias", 0.02, w)
		}
		add(p+".mlp1.weight", 0.02, 4*w, w)
		add(p+".mlp1.bias", 0.02, 4*w)
		add(p+".mlp2.weight", 0.02, w, 4*w)
		add(p+".mlp2.bias", 0.02, w)
		add(p+".mlp_ln.weight", 0.02, w)
		add(p+".mlp_ln.bias", 0.02, w)
	}
	add("encoder.conv1.weight", 0.02, w, 3, d.NMels)
	add("encoder.conv1.bias", 0.02, w)
	add("encoder.conv2.weight", 0.02, w, 3, w)
	add("encoder.conv2.bias", 0.02, w)
	for i := 0; i < d.AudioLayer; i++ {
		block(fmt.Sprintf("encoder.blocks.%d", i), false)
	}
	add("encoder.ln_post.weight", 0.02, w)
	add("encoder.ln_post.bias", 0.02, w)
	add("decoder.token_embedding.weight", 0.02, d.Vocab, w)
	add("decoder.positional_embedding", 0.02, d.TextCtx, w)
	for i := 0; i < d.TextLayer; i++ {
		block(fmt.Sprintf("decoder.blocks.%d", i), true)
	}
	add("decoder.ln.weight", 0.02, w)
	add("decoder.ln.bias", 0.02, w)
	return src
}

// writeWAV writes 16 kHz mono s16 samples.
func writeWAV(path string, samples []float32) error {
	buf := make([]byte, 44+2*len(samples))
	copy(buf, "RIFF")
	binary.LittleEndian.PutUint32(buf[4:], uint32(36+2*len(samples)))
	copy(buf[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(buf[16:], 16)
	binary.LittleEndian.PutUint16(buf[20:], 1)
	binary.LittleEndian.PutUint16(buf[22:], 1)
	binary.LittleEndian.PutUint32(buf[24:], 16000)
	binary.LittleEndian.PutUint32(buf[28:], 32000)
	binary.LittleEndian.PutUint16(buf[32:], 2)
	binary.LittleEndian.PutUint16(buf[34:], 16)
	copy(buf[36:], "data")
	binary.LittleEndian.PutUint32(buf[40:], uint32(2*len(samples)))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(buf[44+2*i:], uint16(int16(max(-1, min(s, 1))*32767)))
	}
	return os.WriteFile(path, buf, 0o644)
}

// BenchmarkPipelineBase30s transcribes one 30 s window with a
// whisper-base-shaped random model (100 greedy decoder steps, OpenAI's
// default filters) and reports the real-time factor and each stage.
func BenchmarkPipelineBase30s(b *testing.B) { mlxtest.EachBackend(b, benchPipelineBase30s) }

func benchPipelineBase30s(b *testing.B) {
	assets := mlxtest.Assets(b, "whisper")
	dims := whisper.Dims{NMels: 80, AudioCtx: 1500, AudioState: 512, AudioHead: 8, AudioLayer: 6,
		Vocab: 51865, TextCtx: 448, TextState: 512, TextHead: 8, TextLayer: 6}
	wm, err := randomWhisper(dims, true)
	if err != nil {
		b.Fatal(err)
	}
	defer wm.Close()
	tok, err := whisper.TiktokenTokenizer(filepath.Join(assets, "multilingual.tiktoken"), true, dims.NumLanguages())
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(wm, tok)
	if err != nil {
		b.Fatal(err)
	}
	samples := make([]float32, 30*16000)
	for i := range samples {
		samples[i] = float32(0.3*math.Sin(2*math.Pi*220*float64(i)/16000) + 0.01*math.Sin(float64(i*i%977)))
	}
	path := filepath.Join(b.TempDir(), "tone.wav")
	if err := writeWAV(path, samples); err != nil {
		b.Fatal(err)
	}
	o := decodeOptions{language: "en", task: "transcribe", sampleLen: 100, maxInitialTimestamp: 1,
		suppressBlank: true, suppressTokens: suppressSet(tok, nil)}
	var tDecode, tMel, tEnc, tDec time.Duration
	var cEnc, cDec float64 // CPU seconds: steadier than wall time on a shared machine
	steps := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		pcm, err := audio.Decode(path, audio.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		spec, err := mel.LogMelPadded(pcm, dims.NMels)
		if err != nil {
			b.Fatal(err)
		}
		seg := spec.Segment(0, 3000)
		t2 := time.Now()
		c2 := processCPU()
		x := mlx.FromSlice(seg.Data, seg.NMels, seg.NFrames)
		feats, err := wm.Encode(x)
		x.Free()
		if err != nil {
			b.Fatal(err)
		}
		cross, err := wm.CrossAttention(feats) // once per window, as the pipeline does
		feats.Free()
		if err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		c3 := processCPU()
		res, err := m.decodeWindow(context.Background(), cross, o)
		cross.Close()
		if err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		c4 := processCPU()
		cEnc += c3 - c2
		cDec += c4 - c3
		steps += len(res.tokens)
		tDecode += t1.Sub(t0)
		tMel += t2.Sub(t1)
		tEnc += t3.Sub(t2)
		tDec += t4.Sub(t3)
	}
	n := float64(b.N)
	total := tDecode + tMel + tEnc + tDec
	b.ReportMetric(total.Seconds()/n/30, "RTF")
	b.ReportMetric(tDecode.Seconds()*1000/n, "decode-ms")
	b.ReportMetric(tMel.Seconds()*1000/n, "mel-ms")
	b.ReportMetric(tEnc.Seconds()*1000/n, "encoder-ms")
	b.ReportMetric(tDec.Seconds()*1000/n, "decoder-ms")
	b.ReportMetric(float64(steps)/n, "tokens")
	b.ReportMetric(tDec.Seconds()*1000/float64(max(steps, 1)), "ms/token")
	b.ReportMetric(cEnc*1000/n, "encoder-cpu-ms")
	b.ReportMetric(cDec*1000/float64(max(steps, 1)), "cpu-ms/token")
}
