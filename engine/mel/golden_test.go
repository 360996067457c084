package mel

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
)

func readGolden(t testing.TB, name string) *Array {
	t.Helper()
	p := mlxtest.Assets(t, "whisper", "golden", "mel", name)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := ReadNPY(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return a
}

// maxAbsDiff compares two arrays of equal shape and reports the worst
// element.
func maxAbsDiff(t *testing.T, name string, got []float32, want *Array) (float64, int) {
	t.Helper()
	if len(got) != len(want.Data) {
		t.Fatalf("%s: %d values, golden has %d (shape %v)", name, len(got), len(want.Data), want.Shape)
	}
	worst, at := 0.0, -1
	for i := range got {
		if d := math.Abs(float64(got[i]) - float64(want.Data[i])); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	return worst, at
}

// The log-mel must match OpenAI's reference within 1e-4 for both inputs,
// both mel counts, with and without transcribe()'s 30 s padding.
func TestLogMelGolden(t *testing.T) {
	for _, key := range []string{"jfk_wav", "ls_test_flac"} {
		audio := readGolden(t, key+".audio16k.npy").Data
		for _, nMels := range []int{80, 128} {
			for _, pad := range []bool{false, true} {
				name := key + ".mel" + itoa(nMels)
				var got *Spectrogram
				var err error
				if pad {
					name += "_pad3000"
					var full *Spectrogram
					full, err = LogMelPadded(audio, nMels)
					if err == nil {
						if want := (len(audio) + NSamples) / HopLength; full.NFrames != want {
							t.Fatalf("%s: padded mel has %d frames, want %d", name, full.NFrames, want)
						}
						got = full.Segment(0, NFrames)
					}
				} else {
					got, err = LogMel(audio, nMels, 0)
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := readGolden(t, name+".npy")
				if want.Shape[0] != got.NMels || want.Shape[1] != got.NFrames {
					t.Fatalf("%s: shape %dx%d, golden %v", name, got.NMels, got.NFrames, want.Shape)
				}
				d, at := maxAbsDiff(t, name, got.Data, want)
				t.Logf("%s: max |diff| %.3g", name, d)
				if d > 1e-4 {
					t.Errorf("%s: max |diff| %.3g at mel %d frame %d (got %g want %g)", name, d, at/got.NFrames, at%got.NFrames, got.Data[at], want.Data[at])
				}
			}
		}
	}
}

// A window computed on its own (pad_or_trim then log-mel) is the same
// spectrogram as the first 3000 frames of the padded one when the audio is
// under 30 s, as for jfk.
func TestWindowMatchesPaddedGolden(t *testing.T) {
	audio := readGolden(t, "jfk_wav.audio16k.npy").Data
	got, err := Window(audio, 80)
	if err != nil {
		t.Fatal(err)
	}
	want := readGolden(t, "jfk_wav.mel80_pad3000.npy")
	d, _ := maxAbsDiff(t, "window", got.Data, want)
	if d > 1e-4 {
		t.Fatalf("Window vs mel80_pad3000: max |diff| %.3g", d)
	}
}

func TestPowerSpectrumGolden(t *testing.T) {
	audio := readGolden(t, "jfk_wav.audio16k.npy").Data
	want := readGolden(t, "jfk_wav.power_spectrum.npy")
	got, frames, err := PowerSpectrum(audio, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want.Shape[0] != Bins || want.Shape[1] != frames {
		t.Fatalf("shape %dx%d, golden %v", Bins, frames, want.Shape)
	}
	// Relative to the spectrum's peak: float32 torch vs float64 here.
	peak := 0.0
	for _, v := range want.Data {
		peak = math.Max(peak, float64(v))
	}
	d, at := maxAbsDiff(t, "power", got, want)
	t.Logf("power spectrum: max |diff| %.3g (peak %.4g)", d, peak)
	if d > 1e-6*peak {
		t.Fatalf("power spectrum differs by %.3g at bin %d frame %d", d, at/frames, at%frames)
	}
}

// torch evaluates the cosine with a vectorised float32 routine that may be
// one ulp off the correctly rounded value, so the window is compared to
// within one float32 ulp of the cosine (6e-8), not bit for bit.
func TestHannWindowGolden(t *testing.T) {
	want := readGolden(t, "hann_window_400.npy")
	exact := 0
	for i, w := range want.Data {
		got := float32(hann[i])
		if got == w {
			exact++
		}
		if d := math.Abs(float64(got - w)); d > 6e-8 {
			t.Fatalf("hann[%d] = %v, torch %v", i, got, w)
		}
	}
	t.Logf("%d of %d window values bit-identical to torch", exact, len(want.Data))
}

// The computed Slaney filters equal OpenAI's mel_filters.npz, read both
// from the npz itself and from the golden .npy copies.
func TestFiltersMatchNPZ(t *testing.T) {
	data, err := os.ReadFile(mlxtest.Assets(t, "whisper", "mel_filters.npz"))
	if err != nil {
		t.Fatal(err)
	}
	arrs, err := ReadNPZ(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, nMels := range []int{80, 128} {
		a := arrs["mel_"+itoa(nMels)]
		if a == nil {
			t.Fatalf("npz has no mel_%d (keys %v)", nMels, keys(arrs))
		}
		if len(a.Shape) != 2 || a.Shape[0] != nMels || a.Shape[1] != Bins {
			t.Fatalf("mel_%d shape %v", nMels, a.Shape)
		}
		fb, err := NewFilters(nMels)
		if err != nil {
			t.Fatal(err)
		}
		d, at := maxAbsDiff(t, "filters", fb.Dense, a)
		t.Logf("mel_%d: computed vs npz max |diff| %.3g", nMels, d)
		if d > 1e-6 {
			t.Errorf("mel_%d: computed filter differs by %.3g at [%d,%d]", nMels, d, at/Bins, at%Bins)
		}
		g := readGolden(t, filepath.Join("mel_filters_"+itoa(nMels)+".npy"))
		if d, _ := maxAbsDiff(t, "golden filters", a.Data, g); d != 0 {
			t.Errorf("npz and golden .npy filters differ by %g", d)
		}
	}
}

func keys(m map[string]*Array) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func itoa(n int) string {
	if n == 80 {
		return "80"
	}
	return "128"
}
