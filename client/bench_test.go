package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lookup/persons/client"
)

// signersBody is a typical answer: three signers, one with protected data.
var signersBody = `{"items":[` + strings.Repeat(`{"first_name":"Grace","middle_name":"B","last_name":"Hopper","hipaa_authorized":true,"account_access":"PHI_AND_ACCOUNT_UPDATES","status":"ACTIVE","type":"POWER_OF_ATTORNEY","address":{"line1":"1 Main St","city":"Springfield","state":"IL","zip_code":"62701","country":"US"},"phone":{"country_code":"+1","area_code":"217","number":"5550100"},"protected_personal_data":{"social_security_number":"6789","date_of_birth":"1950-01-02"}},`, 2) +
	`{"first_name":"Alan","last_name":"Turing","hipaa_authorized":false,"account_access":"NONE","status":"PENDING","type":"GUARDIAN"}]}` + "\n"

func benchServer(b *testing.B) *httptest.Server {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Lookup-Position", "123456")
		w.Header().Set("X-Request-Id", "5f0c6a52-8d0e-4b7a-9c55-0d4b7e0f1a2b")
		_, _ = io.WriteString(w, signersBody)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSignersCall compares a client call with a plain net/http GET of
// the same answer decoded with encoding/json, each sent by one goroutine
// to a server in the same process: cpu-ns/op is the process's CPU (both
// ends) per call, the figure issue 36 bounds (the client at most 1.1x).
func BenchmarkSignersCall(b *testing.B) {
	const id = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	b.Run("plain", func(b *testing.B) {
		srv := benchServer(b)
		hc := &http.Client{}
		url := srv.URL + "/api/v1/authorized-signers?consumer_id=" + id + "&expand=PROTECTED_PERSONAL_DATA"
		b.ReportAllocs()
		start := cpuTime(b)
		for b.Loop() {
			req, err := http.NewRequestWithContext(b.Context(), http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer tok")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var out struct {
				Items []client.AuthorizedSigner `json:"items"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || len(out.Items) != 3 {
				b.Fatal(err, resp.StatusCode)
			}
		}
		b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
	})
	b.Run("client", func(b *testing.B) {
		srv := benchServer(b)
		c, err := client.New(srv.URL, client.WithHTTPClient(&http.Client{}), client.WithToken("tok"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		start := cpuTime(b)
		for b.Loop() {
			res, err := c.AuthorizedSigners(b.Context(), id, client.Expand(client.ProtectedPersonalData))
			if err != nil || len(res.Items) != 3 || res.Meta.Position != 123456 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
	})
}
