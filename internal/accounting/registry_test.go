package accounting_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/testing/accountingtest"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadRegistryRefusesBadFiles(t *testing.T) {
	const okPurposes = "purposes:\n  - code: TREAT\n    statement: Treatment\n    accounting: exempt\n"
	for _, tc := range []struct {
		name, clients, purposes string
		want                    string // the error holds it, after the file's name
	}{
		{"not yaml", "clients: [", "", ": yaml: line 1"},
		{"no list", "clients: {}\n", "", ":1: want one key, clients"},
		{"other top key", "recipients: []\n", "", ":1: want one key, clients"},
		{"entry not a mapping", "clients:\n  - billing\n", "", ":2: an entry must be a mapping"},
		{"unknown field", "clients:\n  - id: a\n    organisation: A\n    address: x\n    valid_from: 2026-01-01\n    name: A\n", "", `:6: unknown field "name"`},
		{"missing field", "clients:\n  - id: a\n    organisation: A\n    valid_from: 2026-01-01\n", "", `:2: field "address" is required`},
		{"field twice", "clients:\n  - id: a\n    id: b\n", "", `:3: field "id" given twice`},
		{"bad date", "clients:\n  - id: a\n    organisation: A\n    address: x\n    valid_from: 1/1/2026\n", "", `:2: valid_from "1/1/2026"`},
		{"reversed days", "clients:\n  - id: a\n    organisation: A\n    address: x\n    valid_from: 2026-01-01\n    valid_to: 2025-01-01\n", "", `:2: valid_to "2025-01-01"`},
		{"bad id", "clients:\n  - id: a b\n    organisation: A\n    address: x\n    valid_from: 2026-01-01\n", "", `:2: id "a b"`},
		{"overlap", "clients:\n  - id: a\n    organisation: A\n    address: x\n    valid_from: 2026-01-01\n    valid_to: 2026-06-30\n" +
			"  - id: a\n    organisation: B\n    address: y\n    valid_from: 2026-06-30\n", "", `:7: client "a": its days overlap those of the entry at line 2`},
		{"open-ended overlap", "clients:\n  - id: a\n    organisation: A\n    address: x\n    valid_from: 2026-01-01\n" +
			"  - id: a\n    organisation: B\n    address: y\n    valid_from: 2020-01-01\n", "", `:6: client "a": its days overlap those of the entry at line 2`},
		{"duplicate purpose", "", okPurposes + "  - code: TREAT\n    statement: Again\n    accounting: exempt\n", `:5: code "TREAT" given twice (first at line 2)`},
		{"bad accounting", "", "purposes:\n  - code: X\n    statement: S\n    accounting: maybe\n", `:2: accounting "maybe": want accountable or exempt`},
		{"nested value", "", "purposes:\n  - code: X\n    statement: [a, b]\n    accounting: exempt\n", `:3: field "statement" must be a single value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cf, pf, file string
			if tc.clients != "" {
				cf = writeFile(t, "clients.yaml", tc.clients)
				file = "clients file " + cf
			}
			if tc.purposes != "" {
				pf = writeFile(t, "purposes.yaml", tc.purposes)
				file = "purposes file " + pf
			}
			_, err := accounting.LoadRegistry(cf, pf)
			if err == nil || !strings.HasPrefix(err.Error(), file+tc.want) {
				t.Errorf("LoadRegistry = %v, want an error starting %q", err, file+tc.want)
			}
		})
	}
	if _, err := accounting.LoadRegistry(filepath.Join(t.TempDir(), "none.yaml"), ""); err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("LoadRegistry of a missing file = %v, want an error naming it", err)
	}
}

func TestRegistryOfTheShippedExamples(t *testing.T) {
	r := accountingtest.ShippedRegistry(t)
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, tc := range []struct {
		id, at, want string
	}{
		{"billing-app", "2026-12-31", "Northwind Billing Services LLC"}, // the last day of the first entry
		{"billing-app", "2027-01-01", "Contoso Revenue Cycle Inc."},
		{"billing-app", "2023-12-31", ""}, // before any entry
		{"onboarding", "2031-05-01", "Example Bank, Customer Onboarding"},
		{"nobody", "2026-01-01", ""},
	} {
		c, ok := r.Client(tc.id, day(tc.at).Add(23*time.Hour))
		if c.Organisation != tc.want || ok != (tc.want != "") {
			t.Errorf("Client(%s, %s) = %q %v, want %q", tc.id, tc.at, c.Organisation, ok, tc.want)
		}
	}
	if p, ok := r.Purpose("TREAT"); !ok || !p.Exempt {
		t.Errorf("Purpose(TREAT) = %+v %v, want an exempt purpose", p, ok)
	}
	if p, ok := r.Purpose("LEGAL"); !ok || p.Exempt || p.Statement == "" {
		t.Errorf("Purpose(LEGAL) = %+v %v, want an accountable purpose with a statement", p, ok)
	}
	if err := r.Check([]string{"", "billing-app"}, []string{"", "TREAT"}); err != nil {
		t.Errorf("Check of known codes = %v", err)
	}
	err := r.Check([]string{"billing-app", "robot"}, []string{"TREAT", "MARKETING"})
	if !errors.Is(err, accounting.ErrUnknownCodes) || !strings.Contains(err.Error(), "client robot, purpose MARKETING") {
		t.Errorf("Check of unknown codes = %v, want ErrUnknownCodes naming them", err)
	}
}
