package events

import (
	"embed"
	"io/fs"
)

//go:embed schema/*.json
var schemaFiles embed.FS

// Schemas holds one JSON Schema (draft 2020-12) per event type of the v1
// contract, named SchemaName(t) at its root, for publishers in other
// languages. Each describes the whole CloudEvents envelope with its data. A
// validator must assert "format" (uri-reference, date-time, date) to check
// all that Decode checks, except what a schema cannot express: that the
// subject agrees with the ids in data, and that no object holds a name
// twice (see Decode for these and for where the time attribute differs).
// Decode and the schemas are kept in agreement by a test.
var Schemas fs.FS = mustSub(schemaFiles, "schema")

// SchemaName returns the name in Schemas of the schema of events of type t.
func SchemaName(t Type) string { return string(t) + ".json" }

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
