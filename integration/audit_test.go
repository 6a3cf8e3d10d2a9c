//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

// auditRecord is the part of an audit record the suite checks.
type auditRecord struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Subject   string    `json:"sub"`
	Client    string    `json:"client"`
	Operation string    `json:"operation"`
	PersonID  string    `json:"person_id"`
	SSNMode   string    `json:"ssn_mode"`
	DOB       bool      `json:"dob_disclosed"`
	Purpose   string    `json:"purpose"`
	Replica   string    `json:"replica"`
}

// auditFixture is a consumer with a signer holding an SSN and a birth
// date, one holding an SSN only and one holding neither, and a consumer
// whose only signer holds neither.
type auditFixture struct {
	consumer, bareConsumer       string
	signerBoth, signerSSN, plain string
	events                       []events.Event
}

func newAuditFixture(t *testing.T) *auditFixture {
	t.Helper()
	f := &auditFixture{consumer: uuid.NewString(), bareConsumer: uuid.NewString(),
		signerBoth: uuid.NewString(), signerSSN: uuid.NewString(), plain: uuid.NewString()}
	business := uuid.NewString()
	signer := func(id, consumer, ssn, dob string) events.Signer {
		return events.Signer{SignerID: id, ConsumerID: consumer, FirstName: "S", LastName: id[:8],
			AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive, Type: events.SignerTypeGuardian,
			SSN: ssn, DateOfBirth: dob}
	}
	for _, d := range []any{
		events.Consumer{ConsumerID: f.consumer, BusinessID: business, FirstName: "Ada", LastName: "Lovelace"},
		events.Consumer{ConsumerID: f.bareConsumer, BusinessID: business, FirstName: "Alan", LastName: "Turing"},
		signer(f.signerBoth, f.consumer, "123-45-6789", "1791-12-26"),
		signer(f.signerSSN, f.consumer, "987-65-4321", ""),
		signer(f.plain, f.consumer, "", ""),
		signer(uuid.NewString(), f.bareConsumer, "", ""),
	} {
		ev, err := events.NewEvent(testSource, 1, d)
		if err != nil {
			t.Fatal(err)
		}
		f.events = append(f.events, ev)
	}
	return f
}

// auditRead is one read of the suite and what it should disclose.
type auditRead struct {
	id, caller, purpose, path string
	persons                   []string // disclosed; none for a plain read
}

// auditReads returns n protected reads by callers (each its own client,
// subject and purpose), with every ssn_mode, and m reads that disclose
// nothing (no expand, or a consumer whose signer has no protected data).
func auditReads(f *auditFixture, n, m, callers int) []auditRead {
	modes := []string{"LAST4", "MASKED", "FULL", "NONE"}
	var reads []auditRead
	for i := range n {
		r := auditRead{id: fmt.Sprintf("prot-%04d", i), caller: fmt.Sprint("caller-", i%callers), purpose: fmt.Sprint("P", i%callers)}
		mode := modes[(i/callers)%len(modes)]
		r.path = "/api/v1/authorized-signers?consumer_id=" + f.consumer + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=" + mode
		r.persons = []string{f.signerBoth}
		if mode != "NONE" {
			r.persons = append(r.persons, f.signerSSN)
		}
		reads = append(reads, r)
	}
	for i := range m {
		r := auditRead{id: fmt.Sprintf("plain-%04d", i), caller: fmt.Sprint("caller-", i%callers), purpose: "P"}
		r.path = "/api/v1/authorized-signers?consumer_id=" + f.consumer
		if i%2 == 1 {
			r.path = "/api/v1/authorized-signers?consumer_id=" + f.bareConsumer + "&expand=PROTECTED_PERSONAL_DATA"
		}
		reads = append(reads, r)
	}
	return reads
}

// getAs sends GET with a request id and a purpose.
func getAs(base, path, token, requestID, purpose string) (int, []byte, error) {
	headers := map[string]string{"X-Request-Id": requestID}
	if purpose != "" {
		headers["Lookup-Purpose"] = purpose
	}
	r, err := testkit.HTTPGet(nil, base+path, token, headers)
	return r.Status, r.Body, err
}

// auditStream reads every record of PERSONS_AUDIT.
func auditStream(ctx context.Context, t *testing.T, js jetstream.JetStream) []auditRecord {
	t.Helper()
	s, err := js.Stream(ctx, "PERSONS_AUDIT")
	if err != nil {
		t.Fatalf("audit stream: %v", err)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	total := s.CachedInfo().State.Msgs
	var (
		out  []auditRecord
		msgs uint64
	)
	for msgs < total {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			recs, err := auditRecordsOf(msg.Data())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, recs...)
			msgs++
		}
	}
	return out
}

// lookupdCommand runs the lookupd binary of the container with args and
// returns its exit code and stdout.
func lookupdCommand(ctx context.Context, t *testing.T, ld *lookupd, args ...string) (int, string) {
	t.Helper()
	code, r, err := ld.ctr.Exec(ctx, append([]string{"/lookupd"}, args...), tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("exec lookupd %v: %v", args, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

// auditedStage is a NATS server holding the audit fixture's events, an
// issuer, and a lookupd replica on a fresh volume, ready and caught up.
type auditedStage struct {
	nw string
	nn *natsNode
	js jetstream.JetStream
	f  *auditFixture
	is *issuer
	ld *lookupd
}

// startAuditedStage starts an auditedStage whose lookupd records its
// disclosures as replica.
func startAuditedStage(ctx context.Context, t *testing.T, replica string) auditedStage {
	t.Helper()
	nw, nn, js := singleNATS(ctx, t)
	f := newAuditFixture(t)
	last := publishAll(ctx, t, js, f.events)
	is := newIssuer(t)
	ld := startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: "nats://nats:4222", volume: "lookupd-" + replica + "-" + uuid.NewString(),
		jwks: is.jwks, env: map[string]string{"LOOKUP_REPLICA_ID": replica}})
	ld.waitReady(t)
	ld.waitApplied(t, last, 60*time.Second)
	return auditedStage{nw: nw, nn: nn, js: js, f: f, is: is, ld: ld}
}

func TestAuditLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := startAuditedStage(ctx, t, "replica-it")
	nn, js, f, is, ld := st.nn, st.js, st.f, st.is, st.ld

	const callers = 4
	tokens := make(map[string]string, callers)
	for i := range callers {
		c := fmt.Sprint("caller-", i)
		tokens[c] = is.tokenWith(t, "read:persons read:persons:ssn", time.Hour, map[string]any{"azp": "app-" + c, "sub": "user-" + c})
	}
	reads := auditReads(f, 1000, 200, callers)
	work := make(chan auditRead)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				code, body, err := getAs(ld.api, r.path, tokens[r.caller], r.id, r.purpose)
				if err != nil || code != http.StatusOK {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %d %s %v", r.id, code, body, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, r := range reads {
		work <- r
	}
	close(work)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d reads failed, first: %s", len(failures), failures[0])
	}

	byRead := map[string]auditRead{}
	want := 0
	for _, r := range reads {
		byRead[r.id] = r
		want += len(r.persons)
	}

	t.Run("one record per read and disclosed person", func(t *testing.T) {
		recs := auditStream(ctx, t, js)
		if len(recs) != want {
			t.Errorf("stream holds %d records, want %d", len(recs), want)
		}
		seen := map[string]bool{}
		for _, rec := range recs {
			key := rec.RequestID + "/" + rec.PersonID
			r, ok := byRead[rec.RequestID]
			switch {
			case seen[key]:
				t.Errorf("record %s twice", key)
			case !ok || len(r.persons) == 0:
				t.Errorf("record for read %s, which disclosed nothing", rec.RequestID)
			case !slices.Contains(r.persons, rec.PersonID):
				t.Errorf("record %s names a person the read did not disclose", key)
			case rec.Client != "app-"+r.caller || rec.Subject != "user-"+r.caller || rec.Purpose != r.purpose || rec.Replica != "replica-it":
				t.Errorf("record %s = %+v, want caller %s purpose %s", key, rec, r.caller, r.purpose)
			}
			seen[key] = true
		}
	})

	t.Run("audit --person lists the disclosures with callers and purposes", func(t *testing.T) {
		code, out := lookupdCommand(ctx, t, ld, "audit", "--person", f.signerSSN)
		if code != 0 {
			t.Fatalf("audit --person: exit %d: %s", code, out)
		}
		var got []auditRecord
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec auditRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			got = append(got, rec)
		}
		wantN := 0
		for _, r := range reads {
			if slices.Contains(r.persons, f.signerSSN) {
				wantN++
			}
		}
		if len(got) != wantN {
			t.Fatalf("audit --person listed %d disclosures, want %d", len(got), wantN)
		}
		for i, rec := range got {
			r := byRead[rec.RequestID]
			if rec.PersonID != f.signerSSN || rec.Client != "app-"+r.caller || rec.Purpose != r.purpose || rec.SSNMode == "" || rec.DOB {
				t.Errorf("listed %+v, want caller %s purpose %s and an SSN only", rec, r.caller, r.purpose)
			}
			if i > 0 && rec.Time.After(got[i-1].Time) {
				t.Errorf("not newest first: %v after %v", rec.Time, got[i-1].Time)
			}
		}
	})

	t.Run("audit --format fhir is a FHIR R4 Bundle of AuditEvents", func(t *testing.T) {
		code, out := lookupdCommand(ctx, t, ld, "audit", "--person", f.signerBoth, "--format", "fhir")
		if code != 0 {
			t.Fatalf("audit --format fhir: exit %d: %s", code, out)
		}
		checkFHIRBundle(t, out, f.signerBoth, 1000)
	})

	t.Run("no SSN or date of birth in the audit stream's files", func(t *testing.T) {
		dir := t.TempDir()
		src := nn.ctr.GetContainerID() + ":/data/jetstream/$G/streams/PERSONS_AUDIT"
		if out, err := exec.Command("docker", "cp", src, dir).CombinedOutput(); err != nil {
			t.Fatalf("docker cp: %v: %s", err, out)
		}
		var all strings.Builder
		err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			all.Write(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// The files are readable: the records' person ids are there.
		if !strings.Contains(all.String(), f.signerSSN) {
			t.Fatalf("the store files do not hold the records in clear; the check below would prove nothing")
		}
		for _, secret := range []string{"123-45-6789", "123456789", "987-65-4321", "987654321", "1791-12-26", "eyJ"} {
			if strings.Contains(all.String(), secret) {
				t.Errorf("audit store files hold %q", secret)
			}
		}
	})

	t.Run("audit verify detects a deleted and an altered message", func(t *testing.T) {
		if code, out := lookupdCommand(ctx, t, ld, "audit", "verify"); code != 0 || !strings.Contains(out, "OK") {
			t.Fatalf("audit verify of an intact ledger: exit %d: %s", code, out)
		}
		s, err := js.Stream(ctx, "PERSONS_AUDIT")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteMsg(ctx, 10); err != nil {
			t.Fatal(err)
		}
		code, out := lookupdCommand(ctx, t, ld, "audit", "verify")
		if code != 1 || !strings.Contains(out, "stream sequence 10: deleted") {
			t.Errorf("audit verify after a deletion: exit %d: %s", code, out)
		}
		m, err := s.GetMsg(ctx, 20)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteMsg(ctx, 20); err != nil {
			t.Fatal(err)
		}
		altered := strings.Replace(string(m.Data), `"purpose":"P`, `"purpose":"X`, 1)
		if _, err := js.Publish(ctx, m.Subject, []byte(altered)); err != nil {
			t.Fatal(err)
		}
		code, out = lookupdCommand(ctx, t, ld, "audit", "verify")
		if code != 1 || !strings.Contains(out, "stream sequence 20") || strings.Count(out, "PROBLEM") < 3 {
			t.Errorf("audit verify after an alteration: exit %d: %s", code, out)
		}
	})

	t.Run("without the audit stream protected answers are 503 and plain ones work", func(t *testing.T) {
		if err := js.DeleteStream(ctx, "PERSONS_AUDIT"); err != nil {
			t.Fatal(err)
		}
		tok := tokens["caller-0"]
		for i := range 20 {
			r := reads[i]
			code, body, err := getAs(ld.api, r.path, tok, fmt.Sprint("down-", i), "P0")
			if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(string(body), "audit-unavailable") ||
				strings.Contains(string(body), "6789") || strings.Contains(string(body), "1791") {
				t.Fatalf("protected read without the audit stream: %d %s %v, want 503 audit-unavailable", code, body, err)
			}
		}
		for _, path := range []string{"/api/v1/persons/" + f.consumer, "/api/v1/authorized-signers?consumer_id=" + f.consumer} {
			if code, body, err := getAs(ld.api, path, tok, "plain", ""); err != nil || code != http.StatusOK {
				t.Errorf("plain read %s without the audit stream: %d %s %v, want 200", path, code, body, err)
			}
		}
	})
}

// checkFHIRBundle checks the structure of a FHIR R4 Bundle of AuditEvents
// of person (the elements R4 requires, and BALP's patient-read shape).
func checkFHIRBundle(t *testing.T, out, person string, wantN int) {
	t.Helper()
	var b struct {
		ResourceType string `json:"resourceType"`
		Type         string `json:"type"`
		Total        int    `json:"total"`
		Entry        []struct {
			FullURL  string         `json:"fullUrl"`
			Resource map[string]any `json:"resource"`
		} `json:"entry"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("fhir output: %v", err)
	}
	if b.ResourceType != "Bundle" || b.Type != "searchset" || b.Total != wantN || len(b.Entry) != wantN {
		t.Fatalf("bundle: resourceType %q type %q total %d entries %d, want Bundle searchset %d", b.ResourceType, b.Type, b.Total, len(b.Entry), wantN)
	}
	for _, e := range b.Entry {
		ev := e.Resource
		if e.FullURL == "" || ev["resourceType"] != "AuditEvent" || ev["action"] != "R" || ev["outcome"] != "0" {
			t.Fatalf("entry %s: not a read AuditEvent: %v", e.FullURL, ev)
		}
		typ, _ := ev["type"].(map[string]any)
		if typ["code"] != "rest" || typ["system"] == nil {
			t.Errorf("type = %v, want a rest Coding", ev["type"])
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ev["recorded"])); err != nil {
			t.Errorf("recorded %v: %v", ev["recorded"], err)
		}
		agents, _ := ev["agent"].([]any)
		requestors := 0
		for _, a := range agents {
			am, _ := a.(map[string]any)
			req, ok := am["requestor"].(bool)
			if !ok {
				t.Errorf("agent %v without the boolean requestor R4 requires", am)
			}
			if req {
				requestors++
			}
		}
		if len(agents) < 2 || requestors != 1 {
			t.Errorf("agents %v: want the source, the client and one requestor", agents)
		}
		src, _ := ev["source"].(map[string]any)
		if _, ok := src["observer"].(map[string]any); !ok {
			t.Errorf("source %v without the observer R4 requires", src)
		}
		ents, _ := ev["entity"].([]any)
		first, _ := ents[0].(map[string]any)
		what, _ := first["what"].(map[string]any)
		if what["reference"] != "Patient/"+person {
			t.Errorf("entity %v, want Patient/%s", first, person)
		}
		if p, _ := ev["purposeOfEvent"].([]any); len(p) != 1 {
			t.Errorf("purposeOfEvent = %v, want the caller's purpose", ev["purposeOfEvent"])
		}
	}
}
