// Package doccheck holds no code: its tests check the documents of the
// repository (README.md, ARCHITECTURE.md, docs/, the decision records and
// the comments of the code) against the code and the file tree. Run them
// with go test ./internal/testing/doccheck/.
package doccheck
