package officer

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
)

// BenchmarkRecipientPage renders a full page (50 rows) of the search by
// recipient: the template's share of a page's CPU.
func BenchmarkRecipientPage(b *testing.B) {
	registry := accountingtest.ShippedRegistry(b)
	o := &officer{Config: Config{Registry: registry, Now: time.Now},
		unknown: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricUnknownCodes}, []string{"kind"})}
	recs := make([]ledger.Record, 50)
	for i := range recs {
		recs[i] = ledger.Record{Time: time.Unix(1700000000+int64(i), 0), RequestID: "0123456789abcdef0123456789abcdef",
			Subject: "user-3-14", Client: "app-3", Operation: "getAuthorizedSigners", Purpose: "HRESCH",
			PersonID: "2f1d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b", SSNMode: "LAST4", Replica: "lookupd-1"}
	}
	d := o.recipientFormData()
	d.Searched = true
	d.Rows, d.Recipients = o.recipientRows(recs)
	w := discardWriter{httptest.NewRecorder()}
	b.ReportAllocs()
	for b.Loop() {
		o.renderRecipient(w, 200, d)
	}
}

// discardWriter is a ResponseWriter that drops the body.
type discardWriter struct{ *httptest.ResponseRecorder }

func (discardWriter) Write(p []byte) (int, error) { return io.Discard.Write(p) }
