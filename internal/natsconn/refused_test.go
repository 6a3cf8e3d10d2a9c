package natsconn

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestConnectRefusedLater: a server that stops accepting the credentials
// after the connection was made (the password changed) is reported to
// OnRefused; once it accepts them again, the reconnect is reported to
// OnAccepted.
func TestConnectRefusedLater(t *testing.T) {
	users := func(pw string) []*server.User { return []*server.User{{Username: "lookupd", Password: pw}} }
	o := testkit.NATSOptions(t.TempDir())
	o.Users = users("s3cret")
	s := testkit.RunNATS(t, o)

	var refusedNow atomic.Bool
	nc, err := Connect(s.ClientURL(), Security{User: "lookupd", PasswordFile: writeFile(t, "s3cret")}, Config{
		OnRefused:  func(error) { refusedNow.Store(true) },
		OnAccepted: func() { refusedNow.Store(false) },
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer nc.Close()

	reload := func(pw string) {
		t.Helper()
		n := *o
		n.Users = users(pw)
		if err := s.ReloadOptions(&n); err != nil {
			t.Fatalf("reload: %v", err)
		}
	}
	reload("changed")
	if err := testkit.WaitUntil(10*time.Second, func() error {
		if !refusedNow.Load() {
			return errors.New("OnRefused not called")
		}
		return nil
	}); err != nil {
		t.Fatalf("after the password changed: %v", err)
	}
	reload("s3cret")
	if err := testkit.WaitUntil(10*time.Second, func() error {
		if refusedNow.Load() || !nc.IsConnected() {
			return errors.New("not accepted again")
		}
		return nil
	}); err != nil {
		t.Fatalf("after the password came back: %v", err)
	}
}
