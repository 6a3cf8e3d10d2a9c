package certreload

import (
	"crypto/x509"
	"fmt"
	"os"
)

// loadPool reads a PEM bundle of CA certificates.
func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("client CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("client CA file %s: no PEM certificate in it", file)
	}
	return pool, nil
}
