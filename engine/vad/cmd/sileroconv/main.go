// Command sileroconv converts Silero VAD's ONNX file (as faster-whisper
// ships it) into the safetensors file engine/vad embeds. It checks the
// graph has the shape engine/vad implements (so a different export fails
// here, loudly, instead of giving wrong probabilities), and writes the
// convolutions in MLX's [Cout, K, Cin] layout. Run through go:generate in
// engine/vad.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"hark/engine/vad/onnx"
	"hark/mlx/safetensors"
)

func main() {
	in := flag.String("in", "", "silero_vad_v6.onnx")
	out := flag.String("out", "", "output .safetensors")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sileroconv:", err)
		os.Exit(1)
	}
}

// conv maps an ONNX Conv weight ([Cout, Cin, K]) to its name in the output.
var conv = map[string]string{
	"encoder.conv_layers.0.weight": "conv0.weight",
	"encoder.conv_layers.1.weight": "conv1.weight",
	"encoder.conv_layers.2.weight": "conv2.weight",
	"encoder.conv_layers.3.weight": "conv3.weight",
	"decoder.conv1d.weight":        "out.weight",
	// The STFT: 129 cosine rows then 129 sine rows of a 256-point window.
	"encoder.feature_extractor.forward_basis_buffer": "stft.basis",
}

// plain are copied as they are.
var plain = map[string]string{
	"encoder.conv_layers.0.bias": "conv0.bias",
	"encoder.conv_layers.1.bias": "conv1.bias",
	"encoder.conv_layers.2.bias": "conv2.bias",
	"encoder.conv_layers.3.bias": "conv3.bias",
	"decoder.conv1d.bias":        "out.bias",
}

func run(in, out string) error {
	if in == "" || out == "" {
		return fmt.Errorf("need -in and -out")
	}
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	g, err := onnx.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := checkGraph(g); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	ts := g.Tensors()
	var res []safetensors.Tensor
	get := func(name string, dims ...int) (*onnx.Tensor, error) {
		t := ts[name]
		if t == nil || t.DType != 1 {
			return nil, fmt.Errorf("%s: no float32 tensor %q", in, name)
		}
		if !slices.Equal(t.Dims, dims) && dims != nil {
			return nil, fmt.Errorf("%s: tensor %q is %v, want %v", in, name, t.Dims, dims)
		}
		return t, nil
	}
	for src, dst := range conv {
		t, err := get(src)
		if err != nil {
			return err
		}
		if len(t.Dims) != 3 {
			return fmt.Errorf("%s: conv weight %q is %v", in, src, t.Dims)
		}
		co, ci, k := t.Dims[0], t.Dims[1], t.Dims[2]
		w := make([]float32, len(t.Float32))
		for o := range co {
			for c := range ci {
				for j := range k {
					w[(o*k+j)*ci+c] = t.Float32[(o*ci+c)*k+j]
				}
			}
		}
		res = append(res, f32(dst, w, co, k, ci))
	}
	for src, dst := range plain {
		t, err := get(src)
		if err != nil {
			return err
		}
		res = append(res, f32(dst, t.Float32, t.Dims...))
	}
	// The LSTM (ONNX gate order i, o, f, c): W [1, 4H, In], R [1, 4H, H],
	// B [1, 8H] = input bias then recurrent bias, summed here.
	w, err := get("onnx::LSTM_209", 1, 512, 128)
	if err != nil {
		return err
	}
	r, err := get("onnx::LSTM_210", 1, 512, 128)
	if err != nil {
		return err
	}
	bias, err := get("onnx::LSTM_211", 1, 1024)
	if err != nil {
		return err
	}
	sum := make([]float32, 512)
	for i := range sum {
		sum[i] = bias.Float32[i] + bias.Float32[512+i]
	}
	res = append(res, f32("lstm.w", w.Float32, 512, 128), f32("lstm.r", r.Float32, 512, 128), f32("lstm.bias", sum, 512))
	return safetensors.Write(out, res, map[string]string{
		"format": "hark-silero-vad", "source": "silero_vad_v6.onnx (faster-whisper assets, MIT)",
		"layout": "conv weights [Cout,K,Cin]; lstm gates i,o,f,c; lstm.bias = Wb + Rb",
	})
}

func f32(name string, v []float32, shape ...int) safetensors.Tensor {
	return safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: safetensors.Float32Bytes(v)}
}

// checkGraph asserts the operator sequence and the constants engine/vad
// hard-codes: reflect padding of 128 on both sides, a 256-point STFT with
// hop 128 whose first frame is dropped, four convolutions with strides
// 1, 2, 2, 1, and one LSTM of 128 units.
func checkGraph(g *onnx.Graph) error {
	want := []string{"Pad", "Unsqueeze", "Conv", "Slice", "Slice", "Pow", "Pow", "Add", "Sqrt",
		"Conv", "Relu", "Conv", "Relu", "Conv", "Relu", "Conv", "Relu", "Transpose", "LSTM",
		"Squeeze", "Relu", "Transpose", "Conv", "Sigmoid", "Reshape"}
	var got []string
	for _, n := range g.Nodes {
		got = append(got, n.OpType)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("graph is %v, not the Silero VAD v6 graph engine/vad implements", got)
	}
	ts := g.Tensors()
	if p := ts[g.Nodes[0].Inputs[1]]; p == nil || !slices.Equal(p.Int64, []int64{0, 128, 0, 128}) {
		return fmt.Errorf("padding is not reflect 128 on both sides")
	}
	for i, s := range []int64{128, 1, 2, 2, 1} {
		n := g.Nodes[[]int{2, 9, 11, 13, 15}[i]]
		for _, a := range n.Attrs {
			if a.Name == "strides" && (len(a.Ints) != 1 || a.Ints[0] != s) {
				return fmt.Errorf("conv %s has strides %v, want %d", n.Name, a.Ints, s)
			}
		}
	}
	re, im := g.Nodes[3].Inputs, g.Nodes[4].Inputs
	if !slices.Equal(ts[re[1]].Int64, []int64{0, 1}) || !slices.Equal(ts[im[1]].Int64, []int64{129, 1}) {
		return fmt.Errorf("STFT slices are not [0:129, 1:] and [129:, 1:]")
	}
	return nil
}
