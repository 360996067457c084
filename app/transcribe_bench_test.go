package app

import (
	"testing"
	"time"

	"hark/mlx/mlxtest"
)

// BenchmarkQueueStart measures how soon a dropped file starts once the
// model is loaded (issue 18: within 1 s): ms until the entry runs, and
// until it transcribes (audio read, model leased). Each entry is then
// cancelled; model-loads counts entries that had to load the model again
// (the runner keeps it between files, so it stays 0).
func BenchmarkQueueStart(b *testing.B) {
	a, _ := speechApp(b)
	jfk := mlxtest.Assets(b, "audio", "jfk.wav")
	// Warm: the first file loads the model.
	if _, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{jfk}, Options: fast}); err != nil {
		b.Fatal(err)
	}
	waitFinishedB(b, a)
	var toRun, toWork time.Duration
	loads := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		items, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{jfk}, Options: fast})
		if err != nil {
			b.Fatal(err)
		}
		id := items[0].ID
		var ran bool
		for {
			it := findItem(a, id)
			if !ran && it.State != "queued" {
				toRun += time.Since(t0)
				ran = true
			}
			if it.Phase == "transcribing" || it.Finished() {
				toWork += time.Since(t0)
				if it.LoadedModel {
					loads++
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		a.Service.CancelTranscription(id)
		waitFinishedB(b, a)
	}
	b.StopTimer()
	b.ReportMetric(float64(toRun.Milliseconds())/float64(b.N), "ms-to-run")
	b.ReportMetric(float64(toWork.Milliseconds())/float64(b.N), "ms-to-transcribe")
	b.ReportMetric(float64(loads), "model-loads")
}

func findItem(a *App, id string) QueueItem {
	items, _ := a.Service.TranscriptionQueue()
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	return QueueItem{}
}

func waitFinishedB(b *testing.B, a *App) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		items, _ := a.Service.TranscriptionQueue()
		all := true
		for _, it := range items {
			all = all && it.Finished()
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("queue not finished: %+v", items)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
