package loadtest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// ZipfS is the exponent s of the Zipf draws (s > 1): with s = 1.1 over a
// million people the most read person has 12% of the requests, the 1,000
// most read 69%.
const ZipfS = 1.1

// Draw returns n person indexes in [0, people) drawn from seed with the
// distribution dist (Uniform or Zipf). The Zipf ranks are mapped to people
// through a random permutation, so the hot people are spread over the
// population, not its first created.
func Draw(dist string, n, people int, seed uint64) ([]int, error) {
	if people < 1 || n < 0 {
		return nil, fmt.Errorf("draw %d ids over %d people", n, people)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)) //nolint:gosec // G404: which ids to read, not secrets
	out := make([]int, n)
	switch dist {
	case fixtures.Uniform:
		for i := range out {
			out[i] = rng.IntN(people)
		}
	case fixtures.Zipf:
		perm := rng.Perm(people)
		z := rand.NewZipf(rng, ZipfS, 1, uint64(people-1)) //nolint:gosec // G115: people is positive
		for i := range out {
			out[i] = perm[z.Uint64()]
		}
	default:
		return nil, fmt.Errorf("id distribution %q: want %s or %s", dist, fixtures.Uniform, fixtures.Zipf)
	}
	return out, nil
}

// PersonURI and SignersURI are the request URIs (path and query) of GET
// person and of GET signers with expand (ssn_mode left to its default, as
// the fixture sends it) of the consumer id.
func PersonURI(id string) string { return "/api/v1/persons/" + id }

func SignersURI(id string) string {
	return "/api/v1/authorized-signers?consumer_id=" + id + "&expand=PROTECTED_PERSONAL_DATA"
}

// URIs returns the request URIs of route (PersonURI or SignersURI) for the
// consumers of p at the indexes idx.
func URIs(p *fixtures.Population, idx []int, route func(id string) string) []string {
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = route(p.ConsumerID(k))
	}
	return out
}

// WritePaths writes uris to the file path, one a line, for wrkScript.
func WritePaths(path string, uris []string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // G304: our run directory
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, u := range uris {
		_, _ = w.WriteString(u)
		_ = w.WriteByte('\n')
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
