package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestFlush: what closes in time logs nothing; what does not is given a
// context that ends limit after the call, and its error is logged.
func TestFlush(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantLog string // "": nothing logged
	}{
		{"in time", nil, ""},
		{"too late", errors.New("records unacknowledged"), `msg="audit ledger" err="records unacknowledged"`},
	}
	const limit = 100 * time.Millisecond
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := testkit.TextLogger()
			var deadline time.Time
			var hasDeadline bool
			before := time.Now()
			Flush(func(ctx context.Context) error {
				deadline, hasDeadline = ctx.Deadline()
				if tt.err != nil {
					<-ctx.Done()
				}
				return tt.err
			}, limit, "audit ledger", logger)
			after := time.Now()
			if !hasDeadline || deadline.Sub(before) < limit || deadline.Sub(after) > limit {
				t.Errorf("deadline %v (set %v), want %v after the call, between %v and %v", deadline, hasDeadline, limit, before, after)
			}
			if got := logs.String(); (tt.wantLog == "") != (got == "") || !strings.Contains(got, tt.wantLog) {
				t.Errorf("log = %q, want %q", got, tt.wantLog)
			}
		})
	}
}

// TestCloseStore: a store closed is logged with its directory; a failure
// is returned with its prefix, and nothing is logged.
func TestCloseStore(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantErr string
		wantLog string
	}{
		{"closed", nil, "", `msg="read model closed" dir=/data/m1`},
		{"failed", errors.New("disk gone"), "close read model: disk gone", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := testkit.TextLogger()
			closed := 0
			err := CloseStore(StoreCloser{Close: func() error { closed++; return tt.err }, Dir: "/data/m1",
				Closed: "read model closed", Failed: "close read model"}, logger)
			if closed != 1 {
				t.Errorf("Close called %d times, want once", closed)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) || (err != nil && !errors.Is(err, tt.err)) {
				t.Errorf("err = %v, want %q wrapping %v", err, tt.wantErr, tt.err)
			}
			if got := logs.String(); (tt.wantLog == "") != (got == "") || !strings.Contains(got, tt.wantLog) {
				t.Errorf("log = %q, want %q", got, tt.wantLog)
			}
		})
	}
}
