// Package audittest is the yardstick of the audit ledger's fault tests
// (cmd/lookupd, integration): audited reads sent at a running lookupd from
// many clients at once, each under a request id of its own, every answer
// kept; and the check of the audit stream against those answers: every
// answer sent with status 200 has its records stored, no record is stored
// twice, and ledger.Verify finds nothing wrong with the whole stream.
// Imported by test files only.
package audittest

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

// Config says what Start sends.
type Config struct {
	URL     string // the whole URL of the protected GET
	Token   string // bearer token
	Workers int    // clients at once; 0 = 8
	// Prefix starts each request id (Prefix-<n>): ids must not repeat
	// across the loads of a test.
	Prefix string
	// Headers are sent with each request (e.g. Lookup-Purpose).
	Headers map[string]string
	Client  *http.Client // nil: a client with a 10 s timeout
}

// Answer is one request and what came back.
type Answer struct {
	// ID is the request id: the answer's X-Request-Id (lookupd's is the
	// one sent; the accounting service makes its own), else the one sent.
	ID     string
	Status int   // 0: no status line came back
	Err    error // of the request or of reading the body
	Sent   time.Time
	Done   time.Time
}

// Released reports whether the answer was sent: a status 200 came back
// (its body may have been cut short: its first bytes were sent all the
// same).
func (a Answer) Released() bool { return a.Status == http.StatusOK }

// Reads is a load of audited reads under way.
type Reads struct {
	cfg      Config
	stop     chan struct{}
	wg       sync.WaitGroup
	next     atomic.Int64
	ok, fail atomic.Int64
	mu       sync.Mutex
	answers  []Answer
}

// Start starts sending cfg's request from cfg.Workers clients, each
// request as soon as the client's previous one is answered, until Stop.
func Start(cfg Config) *Reads {
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	r := &Reads{cfg: cfg, stop: make(chan struct{})}
	for range cfg.Workers {
		r.wg.Add(1)
		go r.work()
	}
	return r
}

func (r *Reads) work() {
	defer r.wg.Done()
	headers := map[string]string{}
	for k, v := range r.cfg.Headers {
		headers[k] = v
	}
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		a := Answer{ID: fmt.Sprintf("%s-%d", r.cfg.Prefix, r.next.Add(1)), Sent: time.Now()}
		headers["X-Request-Id"] = a.ID
		resp, err := testkit.HTTPGet(r.cfg.Client, r.cfg.URL, r.cfg.Token, headers)
		a.Status, a.Err, a.Done = resp.Status, err, time.Now()
		if id := resp.Header.Get("X-Request-Id"); id != "" {
			a.ID = id
		}
		if a.Released() {
			r.ok.Add(1)
		} else {
			r.fail.Add(1)
		}
		r.mu.Lock()
		r.answers = append(r.answers, a)
		r.mu.Unlock()
	}
}

// OK returns the number of answers with status 200 so far.
func (r *Reads) OK() int64 { return r.ok.Load() }

// Failed returns the number of other answers (and requests without one)
// so far.
func (r *Reads) Failed() int64 { return r.fail.Load() }

// Stop stops the clients, waits for the requests under way, and returns
// every answer.
func (r *Reads) Stop() []Answer {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Answer(nil), r.answers...)
}

// Released returns the ids of the answers of as that were sent.
func Released(as []Answer) []string {
	var ids []string
	for _, a := range as {
		if a.Released() {
			ids = append(ids, a.ID)
		}
	}
	return ids
}
