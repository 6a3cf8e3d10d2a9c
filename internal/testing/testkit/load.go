package testkit

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Load is a steady load of GET requests with a bearer token, from a few
// workers each sending its next request as soon as the last is answered.
type Load struct {
	stop           context.CancelFunc
	wg             sync.WaitGroup
	total, failed  atomic.Int64
	mu             sync.Mutex
	examples       []string
	url, token     string
	requestTimeout time.Duration
}

// StartLoad starts workers sending GET url with token until Stop.
func StartLoad(url, token string, workers int) *Load {
	ctx, stop := context.WithCancel(context.Background())
	l := &Load{stop: stop, url: url, token: token, requestTimeout: 10 * time.Second}
	for range workers {
		l.wg.Go(func() { l.work(ctx) })
	}
	return l
}

func (l *Load) work(ctx context.Context) {
	client := &http.Client{Timeout: l.requestTimeout}
	for ctx.Err() == nil {
		status, err := getStatus(client, l.url, l.token)
		l.total.Add(1)
		if err != nil || status != http.StatusOK {
			l.failed.Add(1)
			l.mu.Lock()
			if len(l.examples) < 3 {
				l.examples = append(l.examples, fmt.Sprintf("%d %v", status, err))
			}
			l.mu.Unlock()
		}
	}
}

// Stop ends the load and returns the requests sent, those that failed
// (an error or a status other than 200) and the first few failures.
func (l *Load) Stop() (total, failed int64, examples []string) {
	l.stop()
	l.wg.Wait()
	return l.total.Load(), l.failed.Load(), l.examples
}

// getStatus sends GET url with the bearer token through client and returns
// the status (the body is read whole).
func getStatus(client *http.Client, url, tok string) (int, error) {
	r, err := HTTPGet(client, url, tok, map[string]string{"Accept": "application/json"})
	return r.Status, err
}
