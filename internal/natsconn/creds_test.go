package natsconn

import (
	"errors"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/lookup/persons/internal/testing/testkit"
)

// credsServer starts a server in operator mode trusting one account, and
// returns it with a credentials file of a user of that account and one of
// a user of an account the server does not know.
func credsServer(t *testing.T) (s *server.Server, good, unknown string) {
	t.Helper()
	op, _ := nkeys.CreateOperator()
	opPub, _ := op.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	if _, err := oc.Encode(op); err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	creds := func(trusted bool) string {
		acct, _ := nkeys.CreateAccount()
		acctPub, _ := acct.PublicKey()
		acctJWT, err := jwt.NewAccountClaims(acctPub).Encode(op)
		if err != nil {
			t.Fatal(err)
		}
		if trusted {
			if err := resolver.Store(acctPub, acctJWT); err != nil {
				t.Fatal(err)
			}
		}
		user, _ := nkeys.CreateUser()
		userPub, _ := user.PublicKey()
		userJWT, err := jwt.NewUserClaims(userPub).Encode(acct)
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := user.Seed()
		b, err := jwt.FormatUserConfig(userJWT, seed)
		if err != nil {
			t.Fatal(err)
		}
		return writeFile(t, string(b))
	}
	good, unknown = creds(true), creds(false)
	o := testkit.NATSOptions(t.TempDir())
	o.JetStream = false
	o.TrustedOperators = []*jwt.OperatorClaims{oc}
	o.AccountResolver = resolver
	return testkit.RunNATS(t, o), good, unknown
}

func TestConnectCredentialsFile(t *testing.T) {
	s, good, unknown := credsServer(t)
	nc, err := Connect(s.ClientURL(), Security{CredsFile: good}, Config{})
	if err != nil {
		t.Fatalf("Connect with a credentials file: %v", err)
	}
	if !nc.IsConnected() {
		t.Error("not connected")
	}
	nc.Close()
	if nc, err := Connect(s.ClientURL(), Security{CredsFile: unknown}, Config{}); !errors.Is(err, ErrRefused) {
		if nc != nil {
			nc.Close()
		}
		t.Errorf("Connect with an unknown account's credentials = %v, want ErrRefused", err)
	}
}

// TestConnectTLSWrongCA: a server whose certificate the configured CA did
// not sign is an error at once, not a retry loop.
func TestConnectTLSWrongCA(t *testing.T) {
	ca, other := testkit.NewCA(t), testkit.NewCA(t)
	srv := ca.Server(t, "nats")
	o := testkit.NATSOptions(t.TempDir())
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: srv.CertFile, KeyFile: srv.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	o.TLSConfig, o.TLS = tc, true
	s := testkit.RunNATS(t, o)
	url := "tls://127.0.0.1:" + itoa(s.Addr())
	nc, err := Connect(url, Security{CAFile: ca.CertFile}, Config{})
	if err != nil {
		t.Fatalf("Connect over TLS with the right CA: %v", err)
	}
	nc.Close()
	if nc, err := Connect(url, Security{CAFile: other.CertFile}, Config{}); err == nil {
		nc.Close()
		t.Error("Connect with another CA succeeded, want a TLS error")
	}
}
