package loadtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestReadLedgerCounts(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ledger/metrics", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(metricsText))
	})
	mux.HandleFunc("GET /other/metrics", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("go_goroutines 12\nlookup_audit_records_per_message_count 3\nlookup_audit_records_per_message_sum 3\n"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tests := []struct {
		name    string
		admin   string
		want    LedgerCounts
		wantErr bool
	}{
		{name: "the histogram's count and sum", admin: srv.URL + "/ledger", want: LedgerCounts{Messages: 9, Records: 123, Commits: 8, CommitSeconds: 0.0045}},
		{name: "no commit histogram", admin: srv.URL + "/other", wantErr: true},
		{name: "no /metrics", admin: srv.URL + "/nothing", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadLedgerCounts(srv.Client(), tt.admin)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReadLedgerCounts error = %v, want an error: %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ReadLedgerCounts = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLedgerCountsSince(t *testing.T) {
	tests := []struct {
		name          string
		before, after LedgerCounts
		want          LedgerCounts
	}{
		{name: "grown", before: LedgerCounts{Messages: 10, Records: 40, Commits: 9, CommitSeconds: 0.5},
			after: LedgerCounts{Messages: 25, Records: 100, Commits: 24, CommitSeconds: 2},
			want:  LedgerCounts{Messages: 15, Records: 60, Commits: 15, CommitSeconds: 1.5}},
		{name: "unchanged (ledger off)", before: LedgerCounts{}, after: LedgerCounts{}, want: LedgerCounts{}},
		{name: "went back: restarted", before: LedgerCounts{Messages: 10, Records: 40}, after: LedgerCounts{Messages: 2, Records: 50},
			want: LedgerCounts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.after.Since(tt.before); got != tt.want {
				t.Errorf("%+v.Since(%+v) = %+v, want %+v", tt.after, tt.before, got, tt.want)
			}
		})
	}
}

func TestLedgerCountsCommitMean(t *testing.T) {
	tests := []struct {
		name string
		c    LedgerCounts
		want time.Duration
	}{
		{name: "mean", c: LedgerCounts{Commits: 4, CommitSeconds: 0.001}, want: 250 * time.Microsecond},
		{name: "none acknowledged", c: LedgerCounts{Messages: 3}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.CommitMean(); got != tt.want {
				t.Errorf("%+v.CommitMean() = %v, want %v", tt.c, got, tt.want)
			}
		})
	}
}

// TestLone: each closed-loop tool's Lone sends one request at a time.
func TestLone(t *testing.T) {
	tests := []struct {
		name string
		tool ClosedLoop
		want string
	}{
		{name: "wrk", tool: Wrk{Path: "wrk", Threads: 2, Connections: 64}, want: "wrk -t1 -c1"},
		{name: "vegeta", tool: Vegeta{Connections: 64}, want: "vegeta, 1 workers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tool.Lone().Name(); got != tt.want {
				t.Errorf("Lone().Name() = %q, want %q", got, tt.want)
			}
		})
	}
}
