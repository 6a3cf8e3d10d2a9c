package natsconn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/lookup/persons/internal/testing/testkit"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConnectAuth(t *testing.T) {
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	pub, _ := user.PublicKey()
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()

	tests := []struct {
		name    string
		opts    func(o *server.Options)
		sec     Security
		refused bool
	}{
		{"user and password", func(o *server.Options) {
			o.Users = []*server.User{{Username: "lookupd", Password: "s3cret"}}
		}, Security{User: "lookupd", PasswordFile: writeFile(t, "s3cret")}, false},
		{"wrong password", func(o *server.Options) {
			o.Users = []*server.User{{Username: "lookupd", Password: "s3cret"}}
		}, Security{User: "lookupd", PasswordFile: writeFile(t, "guess")}, true},
		{"anonymous refused", func(o *server.Options) {
			o.Users = []*server.User{{Username: "lookupd", Password: "s3cret"}}
		}, Security{}, true},
		{"token", func(o *server.Options) { o.Authorization = "tok-123" },
			Security{TokenFile: writeFile(t, "tok-123")}, false},
		{"wrong token", func(o *server.Options) { o.Authorization = "tok-123" },
			Security{TokenFile: writeFile(t, "tok-456")}, true},
		{"nkey", func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} },
			Security{NkeyFile: writeFile(t, string(seed))}, false},
		{"unknown nkey", func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} },
			Security{NkeyFile: writeFile(t, string(otherSeed))}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testkit.NATSOptions(t.TempDir())
			tt.opts(o)
			s := testkit.RunNATS(t, o)
			nc, err := Connect(s.ClientURL(), tt.sec, Config{})
			if tt.refused {
				if !errors.Is(err, ErrRefused) {
					t.Fatalf("Connect = %v, want ErrRefused", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer nc.Close()
			if !nc.IsConnected() {
				t.Error("not connected")
			}
		})
	}
}

func TestConnectMutualTLS(t *testing.T) {
	ca := testkit.NewCA(t)
	srv := ca.Server(t, "nats")
	client := ca.Client(t, "lookupd")
	o := testkit.NATSOptions(t.TempDir())
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: srv.CertFile, KeyFile: srv.KeyFile, CaFile: ca.CertFile, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	o.TLSConfig, o.TLS, o.TLSVerify = tc, true, true
	s := testkit.RunNATS(t, o)
	url := "tls://127.0.0.1:" + itoa(s.Addr())
	nc, err := Connect(url, Security{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}, Config{InboxPrefix: DefaultInboxPrefix})
	if err != nil {
		t.Fatalf("Connect with mTLS: %v", err)
	}
	if !nc.TLSRequired() && nc.ConnectedUrl() == "" {
		t.Error("not a TLS connection")
	}
	nc.Close()
	// Without the client certificate the server refuses the handshake:
	// an error at once when the refusal is told as a TLS alert, otherwise
	// (a reset under TLS 1.3) a connection that never comes up.
	nc, err = Connect(url, Security{CAFile: ca.CertFile}, Config{})
	if err == nil {
		defer nc.Close()
		if testkit.WaitUntil(time.Second, func() error {
			if nc.IsConnected() {
				return nil
			}
			return errors.New("not connected")
		}) == nil {
			t.Error("connected without a client certificate")
		}
	}
}

func TestSecurityOptionsConflicts(t *testing.T) {
	f := writeFile(t, "x")
	for name, tc := range map[string]struct {
		sec  Security
		want error
	}{
		"creds and token":       {Security{CredsFile: f, TokenFile: f}, ErrConflictingAuth},
		"user without pass":     {Security{User: "u"}, ErrUserPassword},
		"cert without key":      {Security{CertFile: f}, ErrCertKey},
		"password without user": {Security{PasswordFile: f}, ErrUserPassword},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := tc.sec.Options(); !errors.Is(err, tc.want) {
				t.Errorf("Options = %v, want %v", err, tc.want)
			}
		})
	}
}

func itoa(addr interface{ String() string }) string {
	s := addr.String()
	return s[len("127.0.0.1:"):]
}
