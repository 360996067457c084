// Package transcription is Hark's transcription feature: the queue of
// files and its single worker, the journal that keeps unfinished entries
// across a crash, the resume points of a file cut off mid-way, the kept
// audio of uploads, and transcript exports. It is given what it needs
// (Deps) by app's wiring; app keeps the bound Service methods and the
// HTTP routes, which delegate here.
package transcription
