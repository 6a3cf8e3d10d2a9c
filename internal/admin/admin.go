// Package admin is the admin room: what a running lookupd tells its
// operators about itself, and the few things they may ask it to do.
//
// Its contract: the admin listener's handler (/livez, /readyz, /metrics of
// the process's registry, net/http/pprof when asked for, read-only extras);
// the readiness verdict behind /readyz and lookup_ready (caught up, not
// draining, NATS accepting the credentials, fresh within
// LOOKUP_MAX_STALENESS: Readiness, NewStaleness;
// docs/decisions/0011-readiness.md); the projector's progress as
// Prometheus metrics (NewProjectorCollector, NewVisibleHistogram) and, for
// "lookupd project", as a bar or log lines (ReportProgress); and the
// state-changing actions (POST /snapshot, POST /rebuild) mounted only
// through WithActions behind the admin token (TokenGuard: off without a
// token file, compared in constant time, never logged). The API is
// elsewhere (query); the listener should not be reachable from outside the
// cluster.
package admin

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns the metrics registry of the process, for /metrics,
// with the Go and process collectors. The projector's progress, the
// replica, the API and the audit ledger register their own metrics into
// it.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// Handler returns the handler of the admin listener:
//
//	GET /livez          200 while the process runs
//	GET /readyz         200 once caught up (see Readiness), else 503; JSON body with the progress
//	GET /metrics        Prometheus exposition of reg
//	GET /debug/pprof/   net/http/pprof, only when pprof is true (LOOKUP_PPROF)
//
// plus the extra handlers (e.g. the dev JWKS), by path. Every answer
// carries X-Content-Type-Options: nosniff, and OPTIONS * is answered as
// the API answers it.
func Handler(r *Readiness, reg *prometheus.Registry, extra map[string]http.Handler, pprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		p := r.Source.Progress()
		ready := r.Ready()
		body := struct {
			Ready         bool   `json:"ready"`
			Draining      bool   `json:"draining,omitempty"`
			AppliedSeq    uint64 `json:"applied_sequence"`
			TargetSeq     uint64 `json:"target_sequence"`
			StreamLastSeq uint64 `json:"stream_last_sequence"`
			Connected     bool   `json:"connected"`
			Stale         bool   `json:"stale,omitempty"`
		}{ready, r.Draining.Load(), p.AppliedSeq, p.TargetSeq, p.StreamLastSeq, p.Connected, r.IsStale()}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	for path, h := range extra {
		mux.Handle("GET "+path, h)
	}
	if pprof {
		handlePProf(mux)
	}
	return adminHeaders(mux)
}

// adminHeaders sets X-Content-Type-Options: nosniff on every answer of h,
// and answers OPTIONS * (about the server; http.ServeMux would answer 400)
// with 200 and the methods the admin listener answers.
func adminHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodOptions && r.RequestURI == "*" {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return
		}
		h.ServeHTTP(w, r)
	})
}
