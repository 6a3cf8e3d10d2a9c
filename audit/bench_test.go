package audit

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/query"
)

// benchReader serves one consumer with five signers, each with an SSN and
// a date of birth.
type benchReader struct{}

const benchConsumer = "aaaaaaaa-0000-4000-8000-000000000001"

func (benchReader) Person(context.Context, string) (events.Person, error) {
	return events.Person{}, events.ErrNotFound
}

func (benchReader) Signers(context.Context, string) (events.Person, []events.Signer, error) {
	signers := make([]events.Signer, 5)
	for i := range signers {
		signers[i] = events.Signer{SignerID: fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), ConsumerID: benchConsumer,
			FirstName: "A", LastName: fmt.Sprint("B", i), AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive,
			Type: events.SignerTypeGuardian, SSN: "123456789", DateOfBirth: "1980-01-02"}
	}
	return events.Person{ID: benchConsumer, BusinessID: benchConsumer}, signers, nil
}

// benchKeys returns the JWKS of a fresh ES256 key and a token it verifies.
func benchKeys(b *testing.B) (*query.JWKS, string) {
	b.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	key, err := jwk.Import(priv)
	if err != nil {
		b.Fatal(err)
	}
	_ = key.Set(jwk.KeyIDKey, "k1")
	_ = key.Set(jwk.AlgorithmKey, jwa.ES256())
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		b.Fatal(err)
	}
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	raw, err := json.Marshal(set)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "jwks.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	keys, err := query.LoadJWKSFile(path)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := jwt.NewBuilder().Subject("bench").Expiration(time.Now().Add(time.Hour)).
		Claim("scope", "read:persons").Claim("azp", "bench-app").Build()
	if err != nil {
		b.Fatal(err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), key))
	if err != nil {
		b.Fatal(err)
	}
	return keys, string(signed)
}

// BenchmarkProtectedGET is GET authorized-signers with
// expand=PROTECTED_PERSONAL_DATA (five signers, so five records per
// answer) from concurrent callers, with the ledger off and required
// (in-process JetStream, file storage). Compare the two in one run
// (-count interleaves them): the target is required >= 0.7x of off.
func BenchmarkProtectedGET(b *testing.B) {
	dir := b.TempDir()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	keys, tok := benchKeys(b)
	for _, mode := range []Mode{Off, Required} {
		b.Run(string(mode), func(b *testing.B) {
			l, err := New(nc, Config{Mode: mode, Replica: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close(context.Background())
			s, err := query.NewServer(query.Config{Reader: benchReader{}, Keys: keys, Auditor: l, Registerer: prometheus.NewRegistry()})
			if err != nil {
				b.Fatal(err)
			}
			target := "/api/v1/authorized-signers?consumer_id=" + benchConsumer + "&expand=PROTECTED_PERSONAL_DATA"
			b.SetParallelism(32) // 32 callers per CPU
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodGet, target, nil)
					req.Header.Set("Authorization", "Bearer "+tok)
					req.Header.Set("Lookup-Purpose", "TREAT")
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Errorf("status %d: %s", rec.Code, rec.Body)
						return
					}
				}
			})
		})
	}
}
