// Package natsconn connects to NATS with the security nats.go offers:
// a credentials file (JWT and nkey seed), an nkey seed file, a user with a
// password read from a file, a token read from a file, TLS with a CA file
// and an optional client certificate (mTLS), and tls:// URLs. lookupd uses
// it for every command that connects; a Go program that publishes with
// events.Publisher can use it too:
//
//	nc, err := natsconn.Connect("tls://nats:4222", natsconn.Security{
//		CredsFile: "/etc/publisher/publisher.creds",
//		CAFile:    "/etc/publisher/ca.crt",
//	}, natsconn.Config{Name: "onboarding"})
//	...
//	js, _ := jetstream.New(nc)
//	seq, err := events.NewPublisher(js).Publish(ctx, ev)
//
// A server that refuses the credentials at start-up is an error
// (ErrRefused), never a silent retry loop; one that refuses them later
// (a revoked user, an expired credential) is reported to Config.OnRefused
// and logged.
package natsconn

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

// ErrRefused is wrapped by the error of Connect when the server refused
// the credentials (or their absence).
var ErrRefused = errors.New("the NATS server refused the credentials")

// Security says how to authenticate to NATS and how to secure the
// connection. Every field is optional; the zero value connects
// anonymously, in plain text unless the URL is tls://. Secrets are read
// from files so that they never appear in the environment or a command
// line.
type Security struct {
	CredsFile    string // credentials file (user JWT and nkey seed), as nsc writes it
	NkeyFile     string // nkey seed file (a user nkey, "SU...")
	User         string // user name, with PasswordFile
	PasswordFile string // file holding the password of User
	TokenFile    string // file holding an authentication token
	CAFile       string // PEM CA bundle that verifies the server's certificate
	CertFile     string // client certificate (PEM), with KeyFile: mutual TLS
	KeyFile      string // client key (PEM)
}

// Errors of Security.Options for settings that do not go together.
var (
	ErrConflictingAuth = errors.New("natsconn: set at most one of the credentials file, the nkey file, a user and password, or a token")
	ErrUserPassword    = errors.New("natsconn: a user needs a password file, and a password file a user")
	ErrCertKey         = errors.New("natsconn: a client certificate needs its key, and a key its certificate")
)

// Options returns the nats.go options for s. It reads the password and
// token files now (their content never appears in an error); it checks
// that the other files exist, and nats.go reads them when it connects.
func (s Security) Options() ([]nats.Option, error) {
	n := 0
	for _, set := range []bool{s.CredsFile != "", s.NkeyFile != "", s.User != "" || s.PasswordFile != "", s.TokenFile != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, ErrConflictingAuth
	}
	if (s.User == "") != (s.PasswordFile == "") {
		return nil, ErrUserPassword
	}
	if (s.CertFile == "") != (s.KeyFile == "") {
		return nil, ErrCertKey
	}
	var opts []nats.Option
	for _, f := range []string{s.CredsFile, s.CAFile, s.CertFile, s.KeyFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("natsconn: %w", err)
		}
	}
	switch {
	case s.CredsFile != "":
		opts = append(opts, nats.UserCredentials(s.CredsFile))
	case s.NkeyFile != "":
		o, err := nats.NkeyOptionFromSeed(s.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("natsconn: nkey seed file %s: %w", s.NkeyFile, err)
		}
		opts = append(opts, o)
	case s.User != "":
		pw, err := readSecret(s.PasswordFile, "password")
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(s.User, pw))
	case s.TokenFile != "":
		tok, err := readSecret(s.TokenFile, "token")
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Token(tok))
	}
	if s.CAFile != "" {
		opts = append(opts, nats.RootCAs(s.CAFile))
	}
	if s.CertFile != "" {
		opts = append(opts, nats.ClientCert(s.CertFile, s.KeyFile))
	}
	return opts, nil
}

// readSecret returns the content of file without surrounding white space;
// its errors never hold the content.
func readSecret(file, what string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("natsconn: %s file: %w", what, err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("natsconn: %s file %s is empty", what, file)
	}
	return v, nil
}

// refused reports whether err is the server refusing the credentials.
func refused(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) {
		return true
	}
	return strings.Contains(strings.ToLower(err.Error()), "authorization violation")
}
