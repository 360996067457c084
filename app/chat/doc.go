// Package chat is Hark's chat feature: conversations and their settings
// (kept in library/store), the replies being written in the background,
// one per conversation, on engines leased from the runner (shared, so
// replies and API requests on one model decode in one batch), their
// drafts saved while they stream, draft models for speculative decoding,
// tool calls, and Markdown export. It is given what it needs (Deps) by
// app's wiring; app keeps the bound Service methods and the HTTP routes,
// which delegate here, and publishes its events on the "chat" topic.
package chat
