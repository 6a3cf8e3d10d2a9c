package audit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// fill stores n disclosures of personA through a new ledger.
func fill(t *testing.T, l *Ledger, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := l.Disclose(context.Background(), disclosure(fmt.Sprintf("req-%d", i), personA)); err != nil {
			t.Fatalf("Disclose: %v", err)
		}
	}
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, js jetstream.JetStream, s jetstream.Stream)
		want   []string // substrings of the problems, in order
	}{
		{"intact", func(*testing.T, jetstream.JetStream, jetstream.Stream) {}, nil},
		{"record deleted", func(t *testing.T, _ jetstream.JetStream, s jetstream.Stream) {
			if err := s.DeleteMsg(ctx, 3); err != nil {
				t.Fatal(err)
			}
		}, []string{"stream sequence 3: deleted", "record 3 missing"}},
		{"last record deleted", func(t *testing.T, _ jetstream.JetStream, s jetstream.Stream) {
			if err := s.DeleteMsg(ctx, 5); err != nil {
				t.Fatal(err)
			}
		}, []string{"stream sequence 5: deleted"}},
		{"record altered", func(t *testing.T, js jetstream.JetStream, s jetstream.Stream) {
			m, err := s.GetMsg(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteMsg(ctx, 2); err != nil {
				t.Fatal(err)
			}
			altered := strings.Replace(string(m.Data), `"purpose":"TREAT"`, `"purpose":"OTHER"`, 1)
			if _, err := js.Publish(ctx, m.Subject, []byte(altered)); err != nil {
				t.Fatal(err)
			}
		}, []string{"stream sequence 2: deleted", "record 2 (stream sequence 6) altered"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, js := runNATS(t)
			fill(t, newLedger(t, nc, Config{}), 5)
			s, err := js.Stream(ctx, DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(t, js, s)
			rep, err := Verify(ctx, js, DefaultStream)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if len(rep.Problems) != len(tc.want) {
				t.Fatalf("problems = %q, want %d matching %q", rep.Problems, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(rep.Problems[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, rep.Problems[i], w)
				}
			}
		})
	}
}

func TestVerifyChainsPerLedger(t *testing.T) {
	nc, js := runNATS(t)
	fill(t, newLedger(t, nc, Config{Replica: "a"}), 3)
	fill(t, newLedger(t, nc, Config{Replica: "b"}), 2)
	rep, err := Verify(context.Background(), js, DefaultStream)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() || len(rep.Chains) != 2 || rep.Chains[0].Records != 3 || rep.Chains[1].Records != 2 {
		t.Errorf("Verify = %+v, want chains of 3 (a) and 2 (b) records, no problem", rep)
	}
}
