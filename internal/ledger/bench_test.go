package ledger

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/testing/testkit"
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
func benchKeys(b *testing.B) (*auth.JWKS, string) {
	b.Helper()
	is := testkit.NewECDSAIssuer(b)
	keys, err := auth.LoadJWKSFile(is.WriteJWKS(b))
	if err != nil {
		b.Fatal(err)
	}
	return keys, is.Sign(b, jwt.NewBuilder().Subject("bench").Expiration(time.Now().Add(time.Hour)).
		Claim("scope", "read:persons").Claim("azp", "bench-app"))
}

// benchNATS starts an in-process NATS server with JetStream (file
// storage) and returns a connection to it; or connects to the server at
// $AUDIT_BENCH_NATS_URL (another process, as in a deployment: then its
// CPU time does not count as the replica's).
func benchNATS(b *testing.B) *nats.Conn {
	b.Helper()
	if url := os.Getenv("AUDIT_BENCH_NATS_URL"); url != "" {
		nc, err := nats.Connect(url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		return nc
	}
	nc, _ := testkit.StartNATS(b)
	return nc
}

// benchAPI returns the API with a ledger in mode on nc.
func benchAPI(b *testing.B, nc *nats.Conn, keys *auth.JWKS, mode Mode) http.Handler {
	b.Helper()
	l, err := New(nc, Config{Mode: mode, Replica: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close(context.Background()) })
	return benchServer(b, keys, l)
}

// benchServer returns the API recording disclosures with a.
func benchServer(b *testing.B, keys *auth.JWKS, a query.Auditor) http.Handler {
	b.Helper()
	reg := prometheus.NewRegistry()
	tokens, err := auth.NewVerifier(auth.Config{Keys: keys, Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	s, err := query.NewServer(query.Config{Reader: benchReader{}, Tokens: tokens, Auditor: a, Registerer: reg})
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
					if !benchGet(b, s, tok) {
						return
					}
				}
			})
		})
	}
}

// benchGet answers one protected GET of benchTarget with h and reports
// whether it was a 200 (if not, the benchmark has failed).
func benchGet(b *testing.B, h http.Handler, tok string) bool {
	req := httptest.NewRequest(http.MethodGet, benchTarget, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Lookup-Purpose", "TREAT")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Errorf("status %d: %s", rec.Code, rec.Body)
		return false
	}
	return true
}

// cpuTime returns the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// chunk answers n protected GETs with h from workers concurrent callers
// and returns how long that took, and the CPU time the process used.
func chunk(b *testing.B, h http.Handler, tok string, n, workers int) (wall, cpu time.Duration) {
	start, cpu0 := time.Now(), cpuTime()
	defer func() { wall, cpu = time.Since(start), cpuTime()-cpu0 }()
	var wg sync.WaitGroup
	per := n / workers
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if !benchGet(b, h, tok) {
					return
				}
			}
		}()
	}
	wg.Wait()
	return 0, 0 // set by the deferred function
}

// BenchmarkProtectedGETRatio alternates chunks of protected GETs with the
// ledger off, required, and the one-message-per-record ledger it replaced
// (perRecord; 256 concurrent callers, 1,024 requests a chunk), so that all
// see the same machine load, and reports the throughput of required and
// of per-record relative to off (the target is >= 0.7), the same from the
// CPU time the process used (cpu-required/off: what a replica can serve
// when its CPUs are the limit, whatever else the machine runs; the
// in-process NATS server's CPU counts against required), the time per
// request of each, and the audit stream's messages per audited answer.
func BenchmarkProtectedGETRatio(b *testing.B) {
	nc := benchNATS(b)
	keys, tok := benchKeys(b)
	const perRec = Mode("per-record")
	handlers := map[Mode]http.Handler{Off: benchAPI(b, nc, keys, Off), Required: benchAPI(b, nc, keys, Required),
		perRec: benchServer(b, keys, newPerRecord(b, nc))}
	const n, workers = 1024, 256
	wall, cpu := map[Mode]time.Duration{}, map[Mode]time.Duration{}
	msgs := map[Mode]uint64{}
	rounds := 0
	for b.Loop() {
		order := []Mode{Off, Required, perRec}
		if rounds%2 == 1 {
			order = []Mode{perRec, Required, Off}
		}
		for _, m := range order {
			before := benchStreamMsgs(b, nc)
			w, c := chunk(b, handlers[m], tok, n, workers)
			wall[m] += w
			cpu[m] += c
			msgs[m] += benchStreamMsgs(b, nc) - before
		}
		rounds++
	}
	b.ReportMetric(float64(wall[Off])/float64(wall[Required]), "required/off")
	b.ReportMetric(float64(wall[Off])/float64(wall[perRec]), "per-record/off")
	b.ReportMetric(float64(cpu[Off])/float64(cpu[Required]), "cpu-required/off")
	b.ReportMetric(float64(cpu[Off])/float64(cpu[perRec]), "cpu-per-record/off")
	b.ReportMetric(float64(wall[Off].Nanoseconds())/float64(rounds*n), "off-ns/req")
	b.ReportMetric(float64(wall[Required].Nanoseconds())/float64(rounds*n), "required-ns/req")
	b.ReportMetric(float64(wall[perRec].Nanoseconds())/float64(rounds*n), "per-record-ns/req")
	b.ReportMetric(float64(msgs[Required])/float64(rounds*n), "required-msgs/answer")
	b.ReportMetric(float64(msgs[perRec])/float64(rounds*n), "per-record-msgs/answer")
}

// benchStreamMsgs returns the number of messages in the audit stream (0
// before it exists).
func benchStreamMsgs(b *testing.B, nc *nats.Conn) uint64 {
	b.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	s, err := js.Stream(b.Context(), DefaultStream)
	if err != nil {
		return 0
	}
	info, err := s.Info(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return info.State.Msgs
}

// BenchmarkLedger64 is the ledger alone: 64 concurrent callers, each
// disclosing one or five persons (as a GET signers with expand) and
// waiting for the records to be stored, through the group-commit Ledger
// and the one-message-per-record baseline. It reports the audit stream's
// messages per disclosure (the target is <= 0.2 at five persons), its
// bytes per disclosure and disclosures per second.
func BenchmarkLedger64(b *testing.B) {
	for _, tc := range []struct {
		name string
		new  func(b *testing.B, nc *nats.Conn) query.Auditor
	}{
		{"group-commit", func(b *testing.B, nc *nats.Conn) query.Auditor { return benchLedger(b, nc, 0) }},
		{"group-commit-one-in-flight", func(b *testing.B, nc *nats.Conn) query.Auditor { return benchLedger(b, nc, 1) }},
		{"group-commit-eight-in-flight", func(b *testing.B, nc *nats.Conn) query.Auditor { return benchLedger(b, nc, 8) }},
		{"per-record", func(b *testing.B, nc *nats.Conn) query.Auditor { return newPerRecord(b, nc) }},
	} {
		for _, persons := range []int{1, 5} {
			b.Run(fmt.Sprintf("%s/persons=%d", tc.name, persons), func(b *testing.B) {
				nc, js := testkit.StartNATS(b)
				if err := EnsureStream(b.Context(), js, DefaultStream); err != nil {
					b.Fatal(err)
				}
				a := tc.new(b, nc)
				d := benchDisclosure(persons)
				b.SetParallelism(32) // 64 callers on 2 CPUs
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := a.Disclose(b.Context(), d); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				msgs, bytes := benchStreamState(b, nc)
				b.ReportMetric(float64(msgs)/float64(b.N), "msgs/answer")
				b.ReportMetric(float64(bytes)/float64(b.N), "bytes/answer")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "answers/s")
			})
		}
	}
}

// benchDisclosure returns a disclosure of n persons, as a GET signers
// with expand of n signers.
func benchDisclosure(n int) events.Disclosure {
	ids := []string{personA, personB}
	persons := make([]string, n)
	for i := range persons {
		persons[i] = ids[i%2]
	}
	return disclosure("req", persons...)
}

// benchStreamState returns the number of messages in the audit stream
// and their bytes.
func benchStreamState(b *testing.B, nc *nats.Conn) (msgs, bytes uint64) {
	b.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	s, err := js.Stream(b.Context(), DefaultStream)
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return info.State.Msgs, info.State.Bytes
}

// benchLedger returns a required Ledger on nc with MaxInFlight inFlight
// (0: the default).
func benchLedger(b *testing.B, nc *nats.Conn, inFlight int) *Ledger {
	b.Helper()
	l, err := New(nc, Config{Replica: "bench", MaxInFlight: inFlight})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// BenchmarkLoneDisclose is one caller at a time: the ledger's latency for
// a disclosure of one or five persons (disclose-ns) against one JetStream
// publish round trip of a message as large on the same server (rtt-ns),
// one after the other: a lone disclosure waits for no timer, only for its
// message's round trip.
func BenchmarkLoneDisclose(b *testing.B) {
	for _, persons := range []int{1, 5} {
		b.Run(fmt.Sprintf("persons=%d", persons), func(b *testing.B) { benchLoneDisclose(b, persons) })
	}
}

func benchLoneDisclose(b *testing.B, persons int) {
	nc, js := testkit.StartNATS(b)
	if err := EnsureStream(b.Context(), js, DefaultStream); err != nil {
		b.Fatal(err)
	}
	l := benchLedger(b, nc, 0)
	d := benchDisclosure(persons)
	if err := l.Disclose(b.Context(), d); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, persons*300)
	var rtt, disclose time.Duration
	n := 0
	for b.Loop() { // alternated, so that both see the same machine load
		start := time.Now()
		if _, err := js.Publish(b.Context(), ReplicaSubject("rtt"), body); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := l.Disclose(b.Context(), d); err != nil {
			b.Fatal(err)
		}
		rtt, disclose, n = rtt+mid.Sub(start), disclose+time.Since(mid), n+1
	}
	b.ReportMetric(float64(disclose.Nanoseconds())/float64(n), "disclose-ns")
	b.ReportMetric(float64(rtt.Nanoseconds())/float64(n), "rtt-ns")
}
