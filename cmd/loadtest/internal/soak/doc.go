// Package soak is the memory soak of cmd/loadtest (--soak, "make
// soak"): "lookupd serve" with its default settings holding a large read
// model, under lookups and events at fixed rates, run twice on the same
// model in a memory cgroup of its own, without a limit and within one, its
// memory sampled from the cgroup, /proc and /metrics, and issue 23's
// criteria judged on the two runs (Run). It needs to make memory cgroups
// (root, cgroup v1 or v2).
package soak
