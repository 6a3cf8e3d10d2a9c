//go:build integration

package integration

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// closedLoop sends GET base+path for paths in turn from workers, each
// sending its next request as soon as it has the answer, for d, and
// returns the answers received, the errors among them (a transport error
// or a status other than 200) and the first error's description.
func closedLoop(base, tok string, paths []string, workers int, d time.Duration) (n, errs int64, first string) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var (
		total, failed atomic.Int64
		once          sync.Once
		wg            sync.WaitGroup
	)
	fail := func(what string) {
		failed.Add(1)
		once.Do(func() { first = what })
	}
	deadline := time.Now().Add(d)
	for w := range workers {
		wg.Go(func() {
			for i := w; time.Now().Before(deadline); i += workers {
				req, err := http.NewRequest(http.MethodGet, base+paths[i%len(paths)], nil)
				if err != nil {
					fail(err.Error())
					return
				}
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := client.Do(req)
				total.Add(1)
				if err != nil {
					fail(err.Error())
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					fail(fmt.Sprintf("%s: %d %v", req.URL.Path, resp.StatusCode, err))
				}
			}
		})
	}
	wg.Wait()
	client.CloseIdleConnections()
	return total.Load(), failed.Load(), first
}
