package loadtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Cert is a self-signed server certificate for 127.0.0.1 and localhost,
// made for one run: lookupd reads it from CertFile and KeyFile, the bare
// server holds it as Pair, and the clients trust Pool.
type Cert struct {
	CertFile, KeyFile string
	Pair              tls.Certificate
	Pool              *x509.CertPool
}

// NewCert makes a self-signed ECDSA P-256 certificate valid for a day and
// writes it and its key (0600) as PEM files into dir.
func NewCert(dir string) (*Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "lookupd loadtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	c := &Cert{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), Pool: x509.NewCertPool()}
	if err := os.WriteFile(c.CertFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.KeyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if c.Pair, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, err
	}
	c.Pool.AppendCertsFromPEM(certPEM)
	return c, nil
}

// ClientTLS returns the client configuration that trusts c: TLS 1.3 only.
func (c *Cert) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: c.Pool, MinVersion: tls.VersionTLS13}
}
