package vad

import (
	"testing"
)

// probsOf makes per-frame probabilities from (frames, value) runs.
func probsOf(runs ...[2]float64) []float32 {
	var p []float32
	for _, r := range runs {
		for range int(r[0]) {
			p = append(p, float32(r[1]))
		}
	}
	return p
}

func TestRegionsRules(t *testing.T) {
	o := DefaultOptions()
	// 1 s = 31.25 frames. Speech 100..200, silence 20 frames (0.64 s <
	// 2 s min silence: kept together), speech to 300, then silence.
	p := probsOf([2]float64{100, 0.01}, [2]float64{100, 0.9}, [2]float64{20, 0.01}, [2]float64{80, 0.9}, [2]float64{200, 0.01})
	n := int64(len(p) * Frame)
	got := Regions(p, n, o)
	want := []Region{{Start: 100*Frame - 6400, End: 300*Frame + 6400}}
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A silence longer than 2 s splits; pads of 400 ms on both sides.
	p = probsOf([2]float64{10, 0.9}, [2]float64{100, 0.01}, [2]float64{10, 0.9}, [2]float64{10, 0.01})
	n = int64(len(p)*Frame - 100)
	got = Regions(p, n, o)
	if len(got) != 2 || got[0] != (Region{0, 10*Frame + 6400}) || got[1] != (Region{110*Frame - 6400, n}) {
		t.Fatalf("got %v", got)
	}
	// Between the thresholds (0.35..0.5) speech continues, below 0.35 it
	// ends; an all-quiet recording has no regions.
	if r := Regions(probsOf([2]float64{500, 0.4}), 500*Frame, o); len(r) != 0 {
		t.Fatalf("quiet: %v", r)
	}
	// Min speech drops short bursts; max speech splits long ones.
	o2 := o
	o2.MinSpeechMs = 500
	if r := Regions(probsOf([2]float64{100, 0.01}, [2]float64{5, 0.9}, [2]float64{100, 0.01}), 205*Frame, o2); len(r) != 0 {
		t.Fatalf("short burst kept: %v", r)
	}
	o3 := o
	o3.MaxSpeechSec = 5
	o3.SpeechPadMs = 0
	r := Regions(probsOf([2]float64{400, 0.9}), 400*Frame, o3)
	if len(r) < 2 {
		t.Fatalf("a 12.8 s region was not split at 5 s: %v", r)
	}
	for _, x := range r {
		if x.End-x.Start > 5*SampleRate {
			t.Fatalf("region %v longer than 5 s", x)
		}
	}
	if err := (Options{Threshold: 1.5}).Check(); err == nil {
		t.Fatal("threshold 1.5 accepted")
	}
}

func TestMap(t *testing.T) {
	// Regions: 1..2 s, 40..75 s (crosses the 30 s window boundary of the
	// speech timeline), 100..101 s.
	sec := func(s float64) int64 { return int64(s * SampleRate) }
	regs := []Region{{sec(1), sec(2)}, {sec(40), sec(75)}, {sec(100), sec(101)}}
	m := NewMap(regs)
	if m.Samples() != sec(37) {
		t.Fatalf("speech timeline %d samples", m.Samples())
	}
	cases := []struct {
		in, start, end float64
	}{
		{0, 1, 1},
		{0.5, 1.5, 1.5},
		{1, 40, 2}, // the join: a start goes after the silence, an end before it
		{30, 69, 69},
		{31.5, 70.5, 70.5},
		{36, 100, 75},
		{36.5, 100.5, 100.5},
		{38, 102, 102}, // past the end: clamps to the last region
	}
	for _, c := range cases {
		if got := m.Start(c.in); got != c.start {
			t.Errorf("Start(%v) = %v, want %v", c.in, got, c.start)
		}
		if got := m.End(c.in); got != c.end {
			t.Errorf("End(%v) = %v, want %v", c.in, got, c.end)
		}
	}
	g := Gaps(regs, sec(110))
	if len(g) != 4 || g[0] != (Region{0, sec(1)}) || g[3] != (Region{sec(101), sec(110)}) {
		t.Fatalf("gaps %v", g)
	}
}

// Whatever the probabilities and options, regions are in order, disjoint,
// non-empty and inside the recording, and the map of their timeline lands
// every time inside a region.
func FuzzRegions(f *testing.F) {
	f.Add([]byte{0, 200, 200, 10, 0, 0, 255, 255, 255}, uint16(700), uint8(2), uint8(4), uint8(0))
	f.Add([]byte{255, 0, 255, 0, 255}, uint16(0), uint8(0), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, p []byte, extra uint16, silence, pad, maxSpeech uint8) {
		probs := make([]float32, len(p))
		for i, b := range p {
			probs[i] = float32(b) / 255
		}
		n := int64(len(p)*Frame) - int64(extra%Frame)
		if n < 0 {
			n = 0
		}
		o := DefaultOptions()
		o.MinSilenceMs = int(silence) * 50
		o.SpeechPadMs = int(pad) * 50
		o.MaxSpeechSec = float64(maxSpeech)
		regs := Regions(probs, n, o)
		var at int64
		for i, r := range regs {
			if r.Start < at || r.End <= r.Start || r.End > n {
				t.Fatalf("region %d %v after %d (n %d): %v", i, r, at, n, regs)
			}
			at = r.End
		}
		m := NewMap(regs)
		for s := 0.0; s < float64(m.Samples())/SampleRate; s += 0.37 {
			x := m.Start(s)
			ok := false
			for _, r := range regs {
				if x*SampleRate >= float64(r.Start)-1e-6 && x*SampleRate <= float64(r.End)+1e-6 {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("speech time %v maps to %v, outside %v", s, x, regs)
			}
		}
	})
}
