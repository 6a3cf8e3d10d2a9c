package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/dev"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

// getHeaders sends a GET with token and headers; it returns the response
// (body read into body).
// answer is the status and headers of a response whose body was read.
type answer struct {
	StatusCode int
	Header     http.Header
}

func getHeaders(t *testing.T, url, tok string, hdr map[string]string) (answer, string) {
	t.Helper()
	r, err := testkit.HTTPGet(nil, url, tok, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return answer{r.Status, r.Header}, string(r.Body)
}

// TestServeReadYourWrites publishes through events.Publisher and reads
// back at once with Lookup-Min-Position: never the old state.
func TestServeReadYourWrites(t *testing.T) {
	ns := runNATS(t)
	js := jetStream(t, ns)
	createStream(t, js, "PERSONS")
	id, biz := dev.DemoID("t-consumer", 0), dev.DemoID("business", 0)
	publish(t, js, events.Consumer{ConsumerID: id, BusinessID: biz, FirstName: "V0", LastName: "L"})
	p := start(t, serveEnv(t, ns, t.TempDir()), "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	url := "http://" + addrs["api"] + "/api/v1/persons/" + id

	// A steady background load of other events while the caller writes
	// and reads its own.
	loadCtx, stopLoad := context.WithCancel(t.Context())
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		bg := events.NewPublisher(js)
		for v := uint64(1); loadCtx.Err() == nil; v++ {
			ev, err := events.NewEvent("urn:load", v, events.Consumer{ConsumerID: dev.DemoID("t-load", int(v%50)), BusinessID: biz, FirstName: "L", LastName: "L"})
			if err == nil {
				_, _ = bg.Publish(loadCtx, ev)
			}
		}
	}()
	defer func() { stopLoad(); <-loadDone }()

	pub := events.NewPublisher(js)
	for v := uint64(2); v <= 101; v++ {
		name := fmt.Sprintf("V%d", v)
		ev, err := events.NewEvent("urn:test", v, events.Consumer{ConsumerID: id, BusinessID: biz, FirstName: name, LastName: "L"})
		if err != nil {
			t.Fatal(err)
		}
		seq, err := pub.Publish(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		resp, body := getHeaders(t, url, tok, map[string]string{"Lookup-Min-Position": strconv.FormatUint(seq, 10)})
		pos, _ := strconv.ParseUint(resp.Header.Get("Lookup-Position"), 10, 64)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"first_name":"`+name+`"`) || pos < seq {
			t.Fatalf("after publishing %s at %d: %d Lookup-Position %d %s; want 200 with it", name, seq, resp.StatusCode, pos, body)
		}
	}

	resp, body := getHeaders(t, url, tok, map[string]string{"Lookup-Min-Position": "1000000", "Prefer": "wait=0"})
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "position-not-reached") ||
		resp.Header.Get("Retry-After") == "" || resp.Header.Get("Lookup-Position") == "" {
		t.Errorf("position far ahead: %d %v %s; want 503 position-not-reached with Retry-After and Lookup-Position", resp.StatusCode, resp.Header, body)
	}
	resp, body = getHeaders(t, url, tok, map[string]string{"Lookup-Min-Position": "soon"})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"name":"Lookup-Min-Position"`) {
		t.Errorf("malformed: %d %s; want 400 naming Lookup-Min-Position", resp.StatusCode, body)
	}
	_, metrics, err := get("http://"+addrs["admin"]+"/metrics", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{admin.MetricVisible + "_count ", "lookup_position_waits_total" + `{outcome="timeout"} 1`,
		admin.MetricOldestAge + " ", admin.MetricReady + " 1"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestServeStaleness: with LOOKUP_MAX_STALENESS, a replica whose NATS
// stops turns not ready (and the API answers 503 stale) after the bound,
// and ready again once NATS is back.
func TestServeStaleness(t *testing.T) {
	port := freePort(t)
	storeDir := t.TempDir()
	startNATS := func() *server.Server {
		o := testkit.NATSOptions(storeDir)
		o.Port = port
		return testkit.RunNATS(t, o)
	}
	ns := startNATS()
	js := jetStream(t, ns)
	createStream(t, js, "PERSONS")
	id := dev.DemoID("t-consumer", 0)
	publish(t, js, events.Consumer{ConsumerID: id, BusinessID: dev.DemoID("business", 0), FirstName: "A", LastName: "B"})
	environ := serveEnv(t, ns, t.TempDir())
	environ["LOOKUP_MAX_STALENESS"] = "1s"
	p := start(t, environ, "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	url := "http://" + addrs["api"] + "/api/v1/persons/" + id

	ns.Shutdown()
	ns.WaitForShutdown()
	testkit.WaitFor(t, 30*time.Second, func() error {
		code, body, err := get("http://"+addrs["admin"]+"/readyz", "")
		if err != nil || code != http.StatusServiceUnavailable {
			return fmt.Errorf("readyz with NATS stopped: %d %s %w, want 503", code, body, err)
		}
		var rz struct{ Stale bool }
		if err := json.Unmarshal(body, &rz); err != nil || !rz.Stale {
			return fmt.Errorf("readyz body %s: want stale true", body)
		}
		return nil
	})
	if resp, body := getHeaders(t, url, tok, nil); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "problems/stale") {
		t.Errorf("API while stale: %d %s, want 503 stale", resp.StatusCode, body)
	}

	startNATS()
	waitReady(t, addrs["admin"])
	if resp, body := getHeaders(t, url, tok, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("API once fresh again: %d %s, want 200", resp.StatusCode, body)
	}
}
