package loadtest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/internal/audit"
)

// LedgerVersion is the version of how Ledger writes a synthetic audit
// ledger: a ledger of another version is filled again. Bump it with any
// change to what Ledger writes.
const LedgerVersion = 1

// LedgerSpec is a synthetic audit ledger: Records records of the
// disclosures of Persons persons, in format 2 messages (a message holds
// 1 to MaxRecords records, at random) on the chains of Replicas
// replicas, drawn from Seed.
type LedgerSpec struct {
	Version    int    `json:"version"` // LedgerVersion
	Records    int    `json:"records"`
	Persons    int    `json:"persons"`
	Replicas   int    `json:"replicas"`
	MaxRecords int    `json:"max_records"`
	Seed       uint64 `json:"seed"`
}

// The skew of who is disclosed: a person of rank k (from 0) is disclosed
// with a probability proportional to (ledgerZipfV + k)^-ledgerZipfS. With
// 10 million records over a million persons the most disclosed have about
// 2,000 records each, the median person 2.
const (
	ledgerZipfS = 1.1
	ledgerZipfV = 1000
)

// ledgerMaxBytes bounds a message's bytes, as a Ledger's 56 KiB do.
const ledgerMaxBytes = 48 << 10

// ledgerSpan is the time the records span, ending at ledgerEnd.
const ledgerSpan = 365 * 24 * time.Hour

// ledgerEnd is when the synthetic ledger's last record is written.
var ledgerEnd = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Ledger writes the messages of a LedgerSpec, one at a time (Next), in
// the order a stream holds them: each replica's chain from message 1, each
// message holding the hash of its chain's previous one, as
// "lookupd audit verify" checks. The records are those of answers of
// getAuthorizedSigners with 1 to 5 signers each, their times rising
// evenly over a year. Not safe for concurrent use.
type Ledger struct {
	spec    LedgerSpec
	rng     *rand.Rand
	persons *LedgerPersons
	draw    *rand.Zipf
	chains  []ledgerChain
	written int    // records written
	rmSeq   uint64 // the read model position of the next answer
}

// ledgerChain is a replica's chain as written so far.
type ledgerChain struct {
	name string
	seq  uint64
	prev string
}

// NewLedger returns the writer of spec's messages.
func NewLedger(spec LedgerSpec) *Ledger {
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x2545f4914f6cdd1d)) //nolint:gosec // G404: test data, not secrets
	l := &Ledger{spec: spec, rng: rng, persons: NewLedgerPersons(spec)}
	l.draw = rand.NewZipf(rng, ledgerZipfS, ledgerZipfV, uint64(spec.Persons-1)) //nolint:gosec // G115: Persons is positive
	for i := range spec.Replicas {
		l.chains = append(l.chains, ledgerChain{name: "lookupd-" + strconv.Itoa(i)})
	}
	return l
}

// Written returns the records written so far.
func (l *Ledger) Written() int { return l.written }

// Next returns the subject and bytes of the next message and the records
// it holds; ok is false once every record is written.
func (l *Ledger) Next() (subject string, data []byte, records int, ok bool, err error) {
	if l.written >= l.spec.Records {
		return "", nil, 0, false, nil
	}
	c := &l.chains[l.rng.IntN(len(l.chains))]
	want := min(1+l.rng.IntN(l.spec.MaxRecords), l.spec.Records-l.written)
	m := audit.Message{Version: audit.FormatVersion, Replica: c.name, Seq: c.seq + 1, Prev: c.prev}
	size := 0
	for len(m.Records) < want && size < ledgerMaxBytes {
		recs := l.answer(c.name, want-len(m.Records))
		m.Records = append(m.Records, recs...)
		size += 330 * len(recs) // about a record's JSON
	}
	data, err = json.Marshal(m)
	if err != nil {
		return "", nil, 0, false, err
	}
	sum := sha256.Sum256(data)
	c.seq, c.prev = m.Seq, hex.EncodeToString(sum[:])
	l.written += len(m.Records)
	return audit.ReplicaSubject(c.name), data, len(m.Records), true, nil
}

// answer returns the records of the next answer of replica: 1 to 5
// signers (at most room), at the time its place in the ledger gives.
func (l *Ledger) answer(replica string, room int) []audit.Record {
	n := min(1+l.rng.IntN(5), room)
	var id [16]byte
	binary.LittleEndian.PutUint64(id[:8], l.rng.Uint64())
	binary.LittleEndian.PutUint64(id[8:], l.rng.Uint64())
	at := ledgerEnd.Add(-ledgerSpan + time.Duration(float64(ledgerSpan)*float64(l.written)/float64(l.spec.Records)))
	l.rmSeq += uint64(1 + l.rng.IntN(8)) //nolint:gosec // G115: positive
	base := audit.Record{Time: at, RequestID: hex.EncodeToString(id[:]),
		Subject: "user-" + strconv.Itoa(l.rng.IntN(500)), Client: "app-" + strconv.Itoa(l.rng.IntN(20)),
		Operation: "getAuthorizedSigners", Purpose: ledgerPurposes[l.rng.IntN(len(ledgerPurposes))],
		Persons: n, Replica: replica, ReadModelSeq: l.rmSeq}
	out := make([]audit.Record, n)
	for i := range out {
		r := base
		r.PersonID = l.persons.ID(l.persons.rank[l.draw.Uint64()])
		r.SSNMode = ledgerSSNModes[l.rng.IntN(len(ledgerSSNModes))]
		r.DOBDisclosed = l.rng.IntN(2) == 0
		out[i] = r
	}
	return out
}

// What the records say, at random.
var (
	ledgerPurposes = []string{"TREAT", "PAYMENT", "OPERATIONS", "HRESCH", ""}
	ledgerSSNModes = []string{"FULL", "MASKED", "LAST4", ""}
)

// LedgerPersons are the persons of a LedgerSpec: their ids (person k's,
// fixed by the seed) and the rank of each in how often it is disclosed
// (spread over the persons by a random permutation).
type LedgerPersons struct {
	seed uint64
	rank []int // rank -> person
}

// NewLedgerPersons returns the persons of spec.
func NewLedgerPersons(spec LedgerSpec) *LedgerPersons {
	rng := rand.New(rand.NewPCG(spec.Seed^0x9e3779b97f4a7c15, spec.Seed)) //nolint:gosec // G404: test data, not secrets
	return &LedgerPersons{seed: spec.Seed, rank: rng.Perm(spec.Persons)}
}

// ID returns person k's id, a UUID (version 4).
func (p *LedgerPersons) ID(k int) string {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], splitmix(p.seed^uint64(k)*0xbf58476d1ce4e5b9)) //nolint:gosec // G115: k is not negative
	binary.LittleEndian.PutUint64(u[8:], splitmix(p.seed+uint64(k)))                    //nolint:gosec // G115: k is not negative
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

// Draw returns n person ids drawn from seed: uniformly over the persons
// (Uniform), or as often as the ledger discloses them (Zipf).
func (p *LedgerPersons) Draw(dist string, n int, seed uint64) ([]string, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))             //nolint:gosec // G404: which persons to read, not secrets
	z := rand.NewZipf(rng, ledgerZipfS, ledgerZipfV, uint64(len(p.rank)-1)) //nolint:gosec // G115: positive
	out := make([]string, n)
	for i := range out {
		switch dist {
		case Uniform:
			out[i] = p.ID(rng.IntN(len(p.rank)))
		case Zipf:
			out[i] = p.ID(p.rank[z.Uint64()])
		default:
			return nil, fmt.Errorf("person distribution %q: want %s or %s", dist, Uniform, Zipf)
		}
	}
	return out, nil
}

// splitmix is SplitMix64's mix of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Span returns the time of the ledger's first record and the time its
// records end.
func (s LedgerSpec) Span() (from, to time.Time) { return ledgerEnd.Add(-ledgerSpan), ledgerEnd }
