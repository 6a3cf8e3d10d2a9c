package main

import "time"

// operationsConfig holds the settings of snapshots and rebuilds (see
// docs/operations.md, "Snapshots, bootstrap and rebuilds").
type operationsConfig struct {
	SnapshotBucket    string        // JetStream Object Store bucket; "": no snapshots, no bootstrap
	SnapshotInterval  time.Duration // between snapshots; 0: only on request
	SnapshotKeep      int           // snapshots of the stream kept in the bucket
	RebuildOnMismatch bool          // rebuild a model of another stream instead of refusing to start
}

// snapshotSettings are the settings of every command that writes or
// restores snapshots.
var snapshotSettings = []string{"snapshot-bucket", "snapshot-interval", "snapshot-keep"}

// operationsSettings are the rows of the settings table for
// operationsConfig.
var operationsSettings = []setting{
	{"snapshot-bucket", "LOOKUP_SNAPSHOT_BUCKET", "", "JetStream Object Store bucket of read model snapshots: written every --snapshot-interval and on POST /snapshot, restored into an empty data directory at start (none: off)",
		func(c *config, v string) error { c.SnapshotBucket = v; return nil }},
	{"snapshot-interval", "LOOKUP_SNAPSHOT_INTERVAL", "1h", "interval between snapshots, once caught up, when --snapshot-bucket is set (0s: only on request)",
		duration("snapshot interval", "a duration such as 1h, or 0s (only on request)", true,
			func(c *config) *time.Duration { return &c.SnapshotInterval })},
	{"snapshot-keep", "LOOKUP_SNAPSHOT_KEEP", "3", "snapshots of the stream kept in the bucket (older ones are deleted)",
		atLeast("snapshot keep", 1, func(c *config) *int { return &c.SnapshotKeep })},
	{"rebuild-on-mismatch", "LOOKUP_REBUILD_ON_MISMATCH", "false", "true: a read model of another stream, or of an earlier incarnation of it, is rebuilt beside the old one at start-up instead of stopping serve",
		boolean("rebuild on mismatch", func(c *config) *bool { return &c.RebuildOnMismatch })},
}
