// Package watch is Hark's watch folders (MacWhisper's "hot folder"): one
// fsnotify watch per stored folder, files queued once their size settles,
// and transcripts written in the folder's formats when they finish. It is
// given the database, logger, event publisher and the transcription queue
// (an interface it owns) by app's wiring; app keeps the bound Service
// methods and routes.
package watch
