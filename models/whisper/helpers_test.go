package whisper

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"hark/engine/mel"
	"hark/mlx"
	"hark/mlx/mlxtest"
)

func goldenDir(t testing.TB) string { return mlxtest.Assets(t, "whisper", "golden") }

func readNPY(t testing.TB, path string) *mel.Array {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := mel.ReadNPY(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// loadGoldenModel loads golden/model (or model-varied) and closes it at the
// end of the test.
func loadGoldenModel(t testing.TB, name string) *Model {
	t.Helper()
	m, err := Load(filepath.Join(goldenDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// goldenMel is the 80x3000 floor-padded jfk mel the model_io goldens used.
func goldenMel(t testing.TB) *mlx.Array {
	a := readNPY(t, filepath.Join(goldenDir(t), "mel", "jfk_wav.mel80_pad3000.npy"))
	return mlx.FromSlice(a.Data, a.Shape...)
}

// assertClose compares got to want elementwise with |d| <= atol + rtol*|want|.
func assertClose(t testing.TB, what string, got, want []float32, atol, rtol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) || d > atol+rtol*math.Abs(float64(want[i])) {
			t.Fatalf("%s[%d] = %g, want %g (diff %g)", what, i, got[i], want[i], d)
		}
		if d > worst {
			worst, at = d, i
		}
	}
	t.Logf("%s: max abs diff %.3g at %d over %d values", what, worst, at, len(got))
}
