package ledger

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestFastBatchesUseTheConnectionsInboxPrefix: a least-privilege NATS user
// may subscribe only under its own inbox prefix (deploy/nats/auth.conf), so
// the batch replies must come there, not to nats.go's default _INBOX.
func TestFastBatchesUseTheConnectionsInboxPrefix(t *testing.T) {
	srv := testkit.RunNATS(t, testkit.NATSOptions(t.TempDir()))
	nc, _ := testkit.ConnectNATS(t, srv.ClientURL(), nats.CustomInboxPrefix("_INBOX_lookupd"))
	fb, err := newFastBatches(nc)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.close()
	if want := "_INBOX_lookupd."; !strings.HasPrefix(fb.inbox, want) {
		t.Errorf("batch reply inbox: got %q, want the prefix %q", fb.inbox, want)
	}
}
