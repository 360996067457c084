package app

import (
	"hark/app/events"
	"hark/app/jobs"
)

// The names the shells and the features use for the packages' types.
type (
	Event    = events.Event
	Events   = events.Hub
	Job      = jobs.Job
	Jobs     = jobs.Table
	Progress = jobs.Progress
)
