package loadtest

import (
	"context"
	"os/exec"
)

// AuditServeConfig is how StartAuditServe runs "lookupd audit serve": the
// settings it cannot start without; every other keeps its default unless
// Extra names it.
type AuditServeConfig struct {
	Bin       string // the lookupd binary
	IndexDir  string // LOOKUP_ACCOUNTING_DIR
	NATS      string // LOOKUP_NATS_URL
	Stream    string // LOOKUP_AUDIT_STREAM
	JWKSFile  string // LOOKUP_JWKS_FILE
	Issuer    string // LOOKUP_ISSUER
	Audience  string // LOOKUP_AUDIENCE
	ReplicaID string // LOOKUP_REPLICA_ID: the chain of its searches' records
	Extra     []string
}

// StartAuditServe starts c.Bin as "lookupd audit serve" with both
// listeners on free loopback ports, and returns once its log has named
// both addresses. It does not wait for the index to catch up: poll the
// admin listener's /readyz for that.
func StartAuditServe(ctx context.Context, c AuditServeConfig) (*Dev, error) {
	args := append([]string{"audit", "serve", "--accounting-dir", c.IndexDir, "--nats-url", c.NATS,
		"--audit-stream", c.Stream, "--jwks-file", c.JWKSFile, "--issuer", c.Issuer, "--audience", c.Audience,
		"--replica-id", c.ReplicaID, "--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, c.Extra...)
	cmd := exec.Command(c.Bin, args...) //nolint:gosec // G204: Bin is the lookupd binary the operator named
	return startListening(ctx, cmd, c.NATS, c.Stream, "http://")
}
