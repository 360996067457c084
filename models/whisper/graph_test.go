package whisper

import (
	"path/filepath"
	"slices"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
)

func TestEncoderMatchesGolden(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := loadGoldenModel(t, "model")
	in := goldenMel(t)
	defer in.Free()
	out, err := m.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if !slices.Equal(out.Shape(), []int{1, 1500, 64}) {
		t.Fatalf("encoder output shape %v", out.Shape())
	}
	want := readNPY(t, filepath.Join(goldenDir(t), "model_io", "encoder_output.npy"))
	assertClose(t, "encoder_output", out.Float32s(), want.Data, 1e-4, 1e-4)
}

func TestSinusoidsMatchStoredEmbedding(t *testing.T) {
	m := loadGoldenModel(t, "model")
	got := Sinusoids(1500, 64)
	// The HF checkpoint stores openai's sinusoids() buffer verbatim.
	// The stored buffer is torch float32 arithmetic, whose rounded angles
	// drift from the exact values by ~1.1e-4 at the last positions.
	assertClose(t, "sinusoids", got, m.encPos.Float32s(), 2e-4, 0)
}

// decodeLogits runs the decoder over ids in one call and returns all rows.
func decodeLogits(t *testing.T, m *Model, audio *mlx.Array, chunks ...[]int) []float32 {
	t.Helper()
	d, err := m.NewDecoder(audio, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []float32
	for _, ids := range chunks {
		h, err := d.Forward([][]int{ids})
		if err != nil {
			t.Fatal(err)
		}
		l := m.Logits(h)
		out = append(out, l.Float32s()...)
		mlx.Free(h, l)
	}
	return out
}

func TestDecoderLogitsMatchGolden(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := loadGoldenModel(t, "model")
	in := goldenMel(t)
	defer in.Free()
	audio, err := m.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	defer audio.Free()
	dir := filepath.Join(goldenDir(t), "model_io")

	want := readNPY(t, filepath.Join(dir, "logits_sot_en_transcribe_notimestamps.npy"))
	// All four positions in one pass (causal mask over the prompt).
	got := decodeLogits(t, m, audio, []int{50258, 50259, 50359, 50363})
	assertClose(t, "logits(one pass)", got, want.Data, 1e-4, 1e-4)
	// The same through the KV cache, one token at a time.
	got = decodeLogits(t, m, audio, []int{50258}, []int{50259, 50359}, []int{50363})
	assertClose(t, "logits(kv cache)", got, want.Data, 1e-4, 1e-4)

	want3 := readNPY(t, filepath.Join(dir, "logits_sot_en_transcribe.npy"))
	got = decodeLogits(t, m, audio, []int{50258, 50259, 50359})
	assertClose(t, "logits(3)", got, want3.Data, 1e-4, 1e-4)

	lang := readNPY(t, filepath.Join(dir, "lang_logits.npy"))
	got = decodeLogits(t, m, audio, []int{50258})
	assertClose(t, "lang_logits", got[50259:50358], lang.Data, 1e-4, 1e-4)
}

func TestGreedyPlainArgmaxMatchesGolden(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := loadGoldenModel(t, "model")
	in := goldenMel(t)
	defer in.Free()
	audio, err := m.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	defer audio.Free()
	var g map[string]any
	readJSON(t, filepath.Join(goldenDir(t), "model_io", "greedy_decode.json"), &g)
	for _, key := range []string{"greedy_plain_argmax", "greedy_plain_argmax_notimestamps_prefix"} {
		rec := g[key].(map[string]any)
		prefix := ints(rec["prefix"])
		want := ints(rec["generated"])
		d, err := m.NewDecoder(audio, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		next := prefix
		for len(got) < 40 {
			h, err := d.Forward([][]int{next})
			if err != nil {
				t.Fatal(err)
			}
			last := mlx.SliceAxis(h, 1, h.Dim(1)-1, h.Dim(1))
			l := m.Logits(last)
			am := mlx.ArgMax(l, -1, false)
			tok := am.Ints()[0]
			mlx.Free(h, last, l, am)
			got = append(got, tok)
			if tok == 50257 {
				break
			}
			next = []int{tok}
		}
		d.Close()
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", key, got, want)
		}
	}
}

func ints(v any) []int {
	var out []int
	for _, x := range v.([]any) {
		out = append(out, int(x.(float64)))
	}
	return out
}
