package app

import (
	"hark/app/events"
	"hark/app/jobs"
	"hark/app/transcription"
	"hark/app/watch"
)

// The names the shells and the features use for the packages' types.
type (
	Event    = events.Event
	Events   = events.Hub
	Job      = jobs.Job
	Jobs     = jobs.Table
	Progress = jobs.Progress

	TranscribeOptions = transcription.Options
	QueueItem         = transcription.Item
	TranscriptEvent   = transcription.TranscriptEvent

	WatchFolder        = watch.Folder
	WatchFolderRequest = watch.Request
)

// StateInterrupted marks a queue entry that was queued or running when
// Hark last stopped.
const StateInterrupted = transcription.StateInterrupted
