package vad

//go:generate go run ./cmd/sileroconv -in ../../../shared/assets/vad/silero_vad_v6.onnx -out silero_vad_v6.safetensors

import (
	_ "embed"
	"fmt"
	"sync"

	"hark/mlx"
	"hark/mlx/safetensors"
)

// The model's fixed framing at 16 kHz: each 512-sample frame (32 ms) is
// scored with the 64 samples before it in front.
const (
	SampleRate = 16000
	Frame      = 512
	Context    = 64
	hidden     = 128
	rowLen     = Frame + Context
	// stftPad is the reflect padding on both sides of a row before the
	// 256-point, hop-128 STFT.
	stftPad = 128
)

//go:embed silero_vad_v6.safetensors
var weightsFile []byte

// Model is Silero VAD v6 on the mlx API. Its weights are loaded once per
// process (Load) and shared; each Run carries its own LSTM state.
type Model struct {
	w map[string]*mlx.Array
	// padIdx gathers a row of 576 samples into its reflect-padded 832.
	padIdx *mlx.Array
}

var (
	loadOnce sync.Once
	loaded   *Model
	loadErr  error
)

// Load returns the process's Silero model, loading the embedded weights
// on first use.
func Load() (*Model, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

var shapes = map[string][]int{
	"stft.basis":   {258, 256, 1},
	"conv0.weight": {128, 3, 129}, "conv0.bias": {128},
	"conv1.weight": {64, 3, 128}, "conv1.bias": {64},
	"conv2.weight": {64, 3, 64}, "conv2.bias": {64},
	"conv3.weight": {128, 3, 64}, "conv3.bias": {128},
	"lstm.w": {512, 128}, "lstm.r": {512, 128}, "lstm.bias": {512},
	"out.weight": {1, 1, 128}, "out.bias": {1},
}

func load() (*Model, error) {
	f, err := safetensors.OpenBytes("silero_vad_v6.safetensors", weightsFile)
	if err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	m := &Model{w: map[string]*mlx.Array{}}
	for name, shape := range shapes {
		in, err := f.Tensor(name)
		if err != nil {
			return nil, fmt.Errorf("vad: %w", err)
		}
		if in.DType != safetensors.F32 || !equal(in.Shape, shape) {
			return nil, fmt.Errorf("vad: tensor %q is %s %v, want F32 %v", name, in.DType, in.Shape, shape)
		}
		b, err := f.Bytes(name)
		if err != nil {
			return nil, fmt.Errorf("vad: %w", err)
		}
		a, err := mlx.FromBytes(b, mlx.Float32, shape...)
		if err != nil {
			return nil, fmt.Errorf("vad: tensor %q: %w", name, err)
		}
		m.w[name] = mlx.Detach(a)
	}
	idx := make([]int32, 0, rowLen+2*stftPad)
	for i := stftPad; i > 0; i-- {
		idx = append(idx, int32(i))
	}
	for i := range rowLen {
		idx = append(idx, int32(i))
	}
	for j := range stftPad {
		idx = append(idx, int32(rowLen-2-j))
	}
	m.padIdx = mlx.Detach(mlx.FromSlice(idx))
	return m, nil
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// State is the LSTM state carried from one call to the next.
type State struct{ h, c *mlx.Array }

// Free releases the state's arrays.
func (s *State) Free() {
	mlx.Free(s.h, s.c)
	s.h, s.c = nil, nil
}

// encode runs the convolutional front end on rows [S, 576]: the STFT
// magnitude, four convolutions, and the LSTM's input projection, giving
// [S, 512] (bias included).
func (m *Model) encode(rows *mlx.Array) *mlx.Array {
	s := rows.Dim(0)
	x := mlx.Take(rows, m.padIdx, 1)                    // [S, 832]
	x = mlx.Reshape(x, s, rowLen+2*stftPad, 1)          // [S, 832, 1]
	spec := mlx.Conv1d(x, m.w["stft.basis"], 128, 0, 1) // [S, 5, 258]
	spec = mlx.SliceAxis(spec, 1, 1, spec.Dim(1))       // OpenAI-style: the first frame is dropped
	re := mlx.SliceAxis(spec, 2, 0, 129)
	im := mlx.SliceAxis(spec, 2, 129, 258)
	mag := mlx.Sqrt(mlx.Add(mlx.Square(re), mlx.Square(im))) // [S, 4, 129]
	h := mag
	for i, stride := range []int{1, 2, 2, 1} {
		name := fmt.Sprintf("conv%d", i)
		h = mlx.Relu(mlx.Add(mlx.Conv1d(h, m.w[name+".weight"], stride, 1, 1), m.w[name+".bias"]))
	}
	h = mlx.Reshape(h, s, hidden)                         // [S, 128]: one time step per row
	return mlx.Linear(h, m.w["lstm.w"], m.w["lstm.bias"]) // [S, 512]
}

// Run scores rows, a [S, 576] float32 array of frames (each 64 context
// samples then 512 new ones), carrying st through the LSTM in order, and
// returns the S speech probabilities. A nil or empty st starts from zeros.
func (m *Model) Run(rows *mlx.Array, st *State) []float32 {
	sc := mlx.NewScope()
	defer sc.Close()
	xw := m.encode(rows)
	if st.h == nil {
		st.h = mlx.Detach(mlx.Zeros([]int{1, hidden}, mlx.Float32))
		st.c = mlx.Detach(mlx.Zeros([]int{1, hidden}, mlx.Float32))
	}
	h, c := st.h, st.c
	hs := make([]*mlx.Array, rows.Dim(0))
	for t := range hs {
		// gates = x W^T + h R^T + b, in ONNX's order i, o, f, c.
		g := mlx.Add(mlx.SliceAxis(xw, 0, t, t+1), mlx.MatmulT(h, m.w["lstm.r"]))
		sg := mlx.Sigmoid(mlx.SliceAxis(g, 1, 0, 3*hidden))
		i := mlx.SliceAxis(sg, 1, 0, hidden)
		o := mlx.SliceAxis(sg, 1, hidden, 2*hidden)
		f := mlx.SliceAxis(sg, 1, 2*hidden, 3*hidden)
		cc := mlx.Tanh(mlx.SliceAxis(g, 1, 3*hidden, 4*hidden))
		c = mlx.Add(mlx.Mul(f, c), mlx.Mul(i, cc))
		h = mlx.Mul(o, mlx.Tanh(c))
		hs[t] = h
		if t%64 == 63 {
			mlx.Eval(h, c)
		}
	}
	y := mlx.Relu(mlx.Concatenate(hs, 0)) // [S, 128]
	w := mlx.Reshape(m.w["out.weight"], 1, hidden)
	p := mlx.Sigmoid(mlx.Linear(y, w, m.w["out.bias"])) // [S, 1]
	mlx.Eval(p, h, c)
	nh, nc := mlx.Copy(h), mlx.Copy(c)
	mlx.Eval(nh, nc)
	st.Free()
	st.h, st.c = mlx.Detach(sc.Keep(nh)), mlx.Detach(sc.Keep(nc))
	return p.Float32s()
}
