package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/natstest"
)

func TestFixturePublishes(t *testing.T) {
	f := NewFixture()
	if len(f.Signers) != Signers {
		t.Fatalf("fixture has %d signers, want %d", len(f.Signers), Signers)
	}
	ns := natstest.Run(t, nil)
	_, js := natstest.Connect(t, ns.ClientURL())
	st := natstest.PersonsStream(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.Publish(ctx, ns.ClientURL()); err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := info.State.Msgs, uint64(1+Signers); got != want {
		t.Fatalf("stream holds %d messages, want %d", got, want)
	}
	signers := 0
	for seq := uint64(1); seq <= info.State.Msgs; seq++ {
		msg, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Decode(msg.Subject, msg.Data)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		if s, ok := ev.Data.(events.Signer); ok {
			signers++
			if s.ConsumerID != f.Consumer {
				t.Errorf("signer %d is of consumer %s, want %s", signers, s.ConsumerID, f.Consumer)
			}
		}
	}
	if signers != Signers {
		t.Errorf("published %d signers, want %d", signers, Signers)
	}
}

func TestWaitProjected(t *testing.T) {
	f := NewFixture()
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Projected gradually: 404, then fewer signers, then all of them.
		n := int(calls.Add(1))
		switch {
		case n <= 2 || strings.HasPrefix(r.URL.Path, "/nowhere/"):
			http.NotFound(w, r)
		case strings.HasPrefix(r.URL.Path, "/api/v1/persons/"):
			_, _ = w.Write([]byte(`{}`))
		default:
			items := make([]string, min(n/2, Signers))
			for i := range items {
				items[i] = fmt.Sprintf(`{"n":%d}`, i)
			}
			b, _ := json.Marshal(map[string]json.RawMessage{"items": json.RawMessage("[" + strings.Join(items, ",") + "]")})
			_, _ = w.Write(b)
		}
	}))
	defer api.Close()
	if err := f.WaitProjected(api.Client(), api.URL, "tok", 10*time.Second); err != nil {
		t.Fatalf("WaitProjected: %v", err)
	}
	t.Run("times out with the last error", func(t *testing.T) {
		err := f.WaitProjected(api.Client(), api.URL+"/nowhere", "tok", 50*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v, want the last 404", err)
		}
	})
}
