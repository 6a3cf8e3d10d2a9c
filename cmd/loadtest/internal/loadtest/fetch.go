package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// fetchBatch is how many people FetchBodies fetches before it writes them.
const fetchBatch = 4096

// Fetched is what FetchBodies captured besides the bodies: the headers of
// one answer of each route.
type Fetched struct {
	PersonHeader, SignersHeader http.Header
}

// FetchBodies asks the API at base, with token, for the GET person and
// the GET signers with expand answer of every consumer of p, workers
// requests at a time, and appends their bodies to w in the order of the
// Manifest (person i: records 2i and 2i+1). Any answer but 200 OK stops
// it. progress, when not nil, is called after each batch with the people
// done so far.
func FetchBodies(ctx context.Context, c *http.Client, base, token string, p *fixtures.Population, w *BodyWriter, workers int, progress func(done int)) (Fetched, error) {
	var f Fetched
	bodies := make([][]byte, 2*fetchBatch)
	for start := 0; start < p.People(); start += fetchBatch {
		n := min(fetchBatch, p.People()-start)
		hs, err := fetchRange(ctx, c, base, token, p, start, n, workers, bodies)
		if err != nil {
			return f, err
		}
		if f.PersonHeader == nil {
			f.PersonHeader, f.SignersHeader = answerHeader(hs[0]), answerHeader(hs[1])
		}
		for _, b := range bodies[:2*n] {
			if err := w.Append(b); err != nil {
				return f, err
			}
		}
		if progress != nil {
			progress(start + n)
		}
	}
	return f, nil
}

// fetchRange fetches the answers of consumers start..start+n-1 into
// bodies[0:2n] and returns the headers of the first two.
func fetchRange(ctx context.Context, c *http.Client, base, token string, p *fixtures.Population, start, n, workers int, bodies [][]byte) ([2]http.Header, error) {
	var (
		hs   [2]http.Header
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		jobs = make(chan int)
	)
	for range max(workers, 1) {
		wg.Go(func() {
			for j := range jobs {
				id := p.ConsumerID(start + j/2)
				uri := PersonURI(id)
				if j%2 == 1 {
					uri = SignersURI(id)
				}
				r, err := Get(c, base+uri, token)
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("person %d: %w", start+j/2, err))
					mu.Unlock()
					continue
				}
				bodies[j] = r.Body
				if j < 2 {
					hs[j] = r.Header
				}
			}
		})
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(errs) > 0
	}
	for j := range 2 * n {
		if ctx.Err() != nil || failed() {
			break
		}
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return hs, err
	}
	return hs, errors.Join(errs...)
}

// CheckBodies asks the API at base, with token, for the GET person and
// GET signers answers of the consumers of p at idx, and returns an error
// unless each is 200 OK with the bytes of its record in bodies. The error
// never quotes a body.
func CheckBodies(c *http.Client, base, token string, p *fixtures.Population, bodies *Bodies, idx []int) error {
	for _, i := range idx {
		id := p.ConsumerID(i)
		for k, uri := range []string{PersonURI(id), SignersURI(id)} {
			r, err := Get(c, base+uri, token)
			if err != nil {
				return err
			}
			if rec := 2*i + k; rec >= bodies.Len() || !bytes.Equal(r.Body, bodies.Body(rec)) {
				return fmt.Errorf("person %d: the answer to %s differs from the stored one", i, strings.SplitN(uri, "?", 2)[0])
			}
		}
	}
	return nil
}
