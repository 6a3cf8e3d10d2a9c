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
	"sync"
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

// benchNATS starts an in-process NATS server with JetStream (file
// storage) and returns a connection to it.
func benchNATS(b *testing.B) *nats.Conn {
	b.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: b.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	ns.Start()
	b.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	return nc
}

// benchAPI returns the API with a ledger in mode on nc.
func benchAPI(b *testing.B, nc *nats.Conn, keys *query.JWKS, mode Mode) http.Handler {
	b.Helper()
	l, err := New(nc, Config{Mode: mode, Replica: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close(context.Background()) })
	s, err := query.NewServer(query.Config{Reader: benchReader{}, Keys: keys, Auditor: l, Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

const benchTarget = "/api/v1/authorized-signers?consumer_id=" + benchConsumer + "&expand=PROTECTED_PERSONAL_DATA"

// BenchmarkProtectedGET is GET authorized-signers with
// expand=PROTECTED_PERSONAL_DATA (five signers, so five records per
// answer) from concurrent callers, handled in process, with the ledger
// off and required (in-process JetStream, file storage, sharing the CPUs).
// Compare the two in one run: the target is required >= 0.7x of off.
func BenchmarkProtectedGET(b *testing.B) {
	nc := benchNATS(b)
	keys, tok := benchKeys(b)
	for _, mode := range []Mode{Off, Required} {
		b.Run(string(mode), func(b *testing.B) {
			s := benchAPI(b, nc, keys, mode)
			b.SetParallelism(32) // 32 callers per CPU
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodGet, benchTarget, nil)
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

// chunk answers n protected GETs with h from workers concurrent callers
// and returns how long that took.
func chunk(b *testing.B, h http.Handler, tok string, n, workers int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	per := n / workers
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				req := httptest.NewRequest(http.MethodGet, benchTarget, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Lookup-Purpose", "TREAT")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Errorf("status %d: %s", rec.Code, rec.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkProtectedGETRatio alternates chunks of protected GETs with the
// ledger off and required (64 concurrent callers, 640 requests a chunk),
// so that both see the same machine load, and reports the throughput of
// required relative to off (required/off; the target is >= 0.7) and the
// time per request of each.
func BenchmarkProtectedGETRatio(b *testing.B) {
	nc := benchNATS(b)
	keys, tok := benchKeys(b)
	off, req := benchAPI(b, nc, keys, Off), benchAPI(b, nc, keys, Required)
	const n, workers = 640, 64
	var tOff, tReq time.Duration
	rounds := 0
	for b.Loop() {
		if rounds%2 == 0 {
			tOff += chunk(b, off, tok, n, workers)
			tReq += chunk(b, req, tok, n, workers)
		} else {
			tReq += chunk(b, req, tok, n, workers)
			tOff += chunk(b, off, tok, n, workers)
		}
		rounds++
	}
	b.ReportMetric(float64(tOff)/float64(tReq), "required/off")
	b.ReportMetric(float64(tOff.Nanoseconds())/float64(rounds*n), "off-ns/req")
	b.ReportMetric(float64(tReq.Nanoseconds())/float64(rounds*n), "required-ns/req")
}
