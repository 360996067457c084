package transcription

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"strings"
	"time"

	"hark/app/jobs"
	"hark/app/runner"
	"hark/engine/audio"
	"hark/engine/transcribe"
	"hark/engine/vad"
	"hark/library"
	"hark/library/store"
	"hark/models/profile"
)

// errNoSpeechModel is a file's error when no model was picked and
// Settings names no default.
var errNoSpeechModel = errors.New("no speech model chosen: add a Whisper model to your Library and pick it on the Transcribe page")

// process transcribes one entry and saves the transcript; it returns the
// transcript's id.
func (q *Queue) process(ctx context.Context, it *Item, progress jobs.Progress) (int64, error) {
	q.mu.Lock()
	src, name, uploaded, opt := it.src, it.Name, it.Uploaded, it.Options
	q.mu.Unlock()

	mod, err := q.resolveModel(ctx, opt.Model)
	if err != nil {
		return 0, err
	}
	// The runner keeps the model between files: only a real load shows.
	lease, err := q.Runner.Acquire(ctx, runner.Speech, mod.Path, func() {
		q.update(it, func(it *Item) { it.Phase = "loading" })
		progress(0, 0, "Loading "+modelLabel(mod))
	})
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("load speech model %s: %w", modelLabel(mod), err)
	}
	defer lease.Release()
	m := lease.Speech
	if lease.Loaded {
		q.update(it, func(it *Item) { it.LoadedModel = true })
	}

	// The engine reads the file twice, streaming: a scan (the phase
	// "reading", which also gives the length), then window by window.
	q.update(it, func(it *Item) { it.Phase = "reading" })
	var started time.Time
	topt := engineOptions(opt)
	topt.ScanProgress = func(done, all time.Duration) {
		q.update(it, func(it *Item) { it.Done, it.Total = done.Seconds(), all.Seconds() })
		progress(int64(done.Seconds()), int64(all.Seconds()), "Reading audio")
	}
	topt.Progress = func(done, all time.Duration) {
		d, t := done.Seconds(), all.Seconds()
		if started.IsZero() {
			started = time.Now()
		}
		eta := estimateETA(time.Since(started), d, t)
		q.update(it, func(it *Item) { it.Phase, it.Done, it.Total, it.ETA, it.Note = "transcribing", d, t, eta, "" })
		progress(int64(d), int64(t), "")
	}
	topt.Retry = func(r transcribe.Retry) {
		note := retryNote(r)
		d := retryDone(r).Seconds()
		var total float64
		q.update(it, func(it *Item) {
			total = it.Total
			it.Note = note
			if d > it.Done { // never backwards
				it.Done = d
				it.ETA = estimateETA(time.Since(started), it.Done, it.Total)
			}
		})
		progress(int64(d), int64(total), note)
	}
	onSegment := func(s transcribe.Segment) {
		if text := strings.TrimSpace(s.Text); text != "" {
			q.update(it, func(it *Item) { it.Text = text })
		}
	}
	// The first window's progress arrives only once it is decoded: mark
	// the transcribing phase when the scan is over.
	scan := topt.ScanProgress
	topt.ScanProgress = func(done, all time.Duration) {
		scan(done, all)
		if done >= all {
			started = time.Now()
			q.update(it, func(it *Item) { it.Phase, it.Done, it.ETA = "transcribing", 0, -1 })
		}
	}
	if q.Owner { // only the instance owning the data folder keeps logs
		rlog, cp, err := openResume(&q.Deps, it.ID, src, opt)
		if err != nil {
			q.Log.Warn("transcribe: no resume log", "id", it.ID, "err", err)
		} else {
			defer func() {
				if q.ctx.Err() == nil { // kept only when Hark quits mid-file
					rlog.drop()
				}
			}()
			topt.Resume = cp
			topt.Checkpoint = func(c transcribe.Checkpoint) {
				if err := rlog.add(c); err != nil {
					q.Log.Warn("transcribe: resume log", "id", it.ID, "err", err)
				}
			}
			if cp != nil {
				q.Log.Info("transcribe: resuming", "id", it.ID, "file", name, "segments", len(cp.Segments), "windows", cp.Windows)
				note := fmt.Sprintf("Resuming after %d saved segments", len(cp.Segments))
				q.update(it, func(it *Item) { it.Note = note })
			}
		}
	}
	res, err := m.TranscribeFile(ctx, src, topt, onSegment)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err != nil {
		return 0, describeFileError(src, err)
	}

	q.update(it, func(it *Item) { it.Phase, it.Done, it.ETA = "saving", it.Total, 0 })
	path := src
	if uploaded {
		if path, err = keepUpload(q.DataDir, src, name); err != nil {
			return 0, err
		}
	}
	segs, err := json.Marshal(nonNilSegments(res.Segments))
	if err != nil {
		return 0, fmt.Errorf("encode segments: %w", err)
	}
	t, err := q.DB.SaveTranscript(context.Background(), store.Transcript{
		SourcePath: path, SourceName: name, Model: mod.ID, Language: res.Language, Task: opt.Task,
		Duration: res.Duration, Text: strings.TrimSpace(res.Text), Segments: segs,
	})
	if err != nil {
		if uploaded {
			removeUpload(q.Log, path)
		}
		return 0, err
	}
	q.Publish("transcripts", TranscriptEvent{ID: t.ID, Change: "saved"})
	return t.ID, nil
}

func nonNilSegments(s []transcribe.Segment) []transcribe.Segment {
	if s == nil {
		return []transcribe.Segment{}
	}
	return s
}

// engineOptions maps the UI's options onto OpenAI's defaults.
func engineOptions(o Options) transcribe.Options {
	t := transcribe.DefaultOptions()
	t.Language, t.Task = o.Language, o.Task
	if o.BeamSize > 1 {
		t.BeamSize = o.BeamSize
	}
	if len(o.Temperatures) > 0 {
		t.Temperatures = o.Temperatures
	}
	if o.NoFallback {
		t.Temperatures = t.Temperatures[:1]
	}
	if o.NoSpeechThreshold != nil {
		t.NoSpeechThreshold = *o.NoSpeechThreshold
	}
	if o.LogprobThreshold != nil {
		t.LogProbThreshold = *o.LogprobThreshold
	}
	if o.CompressionRatioThreshold != nil {
		t.CompressionRatioThreshold = *o.CompressionRatioThreshold
	}
	t.InitialPrompt = o.InitialPrompt
	t.WordTimestamps = o.WordTimestamps
	if !o.NoVAD {
		v := vad.DefaultOptions()
		if o.VADThreshold > 0 {
			v.Threshold = o.VADThreshold
		}
		t.VAD = &v
	}
	return t
}

// resolveModel finds the speech model an entry asked for, else the
// default from Settings, and checks it is a Whisper model Hark can run.
func (q *Queue) resolveModel(ctx context.Context, id string) (library.Model, error) {
	if id == "" {
		s, err := q.DB.Settings(ctx)
		if err != nil {
			return library.Model{}, err
		}
		id = s.DefaultSpeechModel
	}
	if id == "" {
		return library.Model{}, errNoSpeechModel
	}
	lib := q.Library.Library()
	if lib == nil {
		return library.Model{}, errors.New("the model library is not running")
	}
	m, err := lib.Resolve(ctx, id)
	if errors.Is(err, library.ErrNotFound) {
		return m, fmt.Errorf("speech model %q is not in your Library (was it moved or deleted?)", id)
	}
	if err != nil {
		return m, fmt.Errorf("speech model %q: %w", id, err)
	}
	switch {
	case m.Kind != profile.KindSpeech:
		return m, fmt.Errorf("%s is not a speech model (it is a %s model); pick a Whisper model", modelLabel(m), m.Kind)
	case !m.Supported:
		return m, fmt.Errorf("%s cannot be used: %s", modelLabel(m), m.Reason)
	case m.Incomplete || m.Downloading:
		return m, fmt.Errorf("%s is incomplete on disk (still downloading?)", modelLabel(m))
	}
	return m, nil
}

func modelLabel(m library.Model) string {
	if m.Repo != "" {
		return m.Repo
	}
	return m.ID
}

// describeAudioError drops the path engine/audio puts in front (the queue
// already shows the file, and an upload's path is a temp name) and makes
// the generic classes say what it means for the user.
func describeAudioError(err error) error {
	var fe *audio.FileError
	if errors.As(err, &fe) {
		err = fe.Err
	}
	switch {
	case errors.Is(err, audio.ErrEmpty):
		return errors.New("the file holds no audio (zero length)")
	case errors.Is(err, audio.ErrBadHeader):
		return fmt.Errorf("the file's header is broken (%v)", err)
	case errors.Is(err, audio.ErrTruncated):
		return fmt.Errorf("the file is cut off (%v); re-export or re-download it", err)
	}
	return err
}

// describeFileError makes an engine error about src fit for the queue,
// where the file is already named (and an upload's path is a temp name).
func describeFileError(src string, err error) error {
	if errors.Is(err, transcribe.ErrNoAudio) || errors.Is(err, audio.ErrEmpty) {
		return errors.New("the file holds no audio (zero length)")
	}
	var fe *audio.FileError
	if errors.As(err, &fe) {
		return describeAudioError(err)
	}
	if msg, ok := strings.CutPrefix(err.Error(), src+": "); ok {
		return errors.New(msg)
	}
	return err
}
