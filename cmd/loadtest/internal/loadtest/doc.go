// Package loadtest is the machinery of "make loadtest" (cmd/loadtest,
// whose package documentation maps it file by file): a model of a large
// Population (the service's internal/testing/fixtures) built once (its
// events published in bulk to a broker in the tool's process,
// internal/dev; "lookupd serve" caught up with them; every answer of
// lookupd captured into a sealed body store, described by a Manifest
// written last), ids drawn at random (Draw, WritePaths), a bare net/http
// server answering the captured bytes (ModelHandler), over HTTP or HTTPS
// (NewCert), and the load generators wrk and vegeta driving both;
// cmd/loadtest writes the figures as Markdown.
//
// Only ratios measured in one run mean anything: the machine is shared.
//
// For a memory soak ("make soak") it runs "lookupd serve" with its default
// settings against such a broker and Population, and samples the
// process's memory from /proc and its /metrics (MemSample) while lookups
// and events run at fixed rates.
//
// Beside the bare server it offers a yardstick of what a user would build
// instead: net/http and PostgreSQL holding the same people (StartPostgres).
package loadtest
