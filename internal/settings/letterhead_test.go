package settings

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

// TestLetterheadSettings: the letterhead of the officer's letters, from
// the variables or the flags of audit serve; the address's lines split
// at ; or a new line; what is unset named by LetterheadUnset.
func TestLetterheadSettings(t *testing.T) {
	all := []string{"LOOKUP_COVERED_ENTITY_NAME", "LOOKUP_COVERED_ENTITY_ADDRESS", "LOOKUP_PRIVACY_OFFICER_CONTACT"}
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		want      Accounting // its letterhead
		wantUnset []string
	}{
		{name: "unset", wantUnset: all},
		{
			name: "variables, address lines split at ;",
			env: map[string]string{"LOOKUP_COVERED_ENTITY_NAME": " Example Health Plan ", "LOOKUP_COVERED_ENTITY_ADDRESS": "1 Main Street; Suite 200 ;Springfield, IL 62701",
				"LOOKUP_PRIVACY_OFFICER_CONTACT": "Jo Roe, privacy@example.org, +1 555 0100"},
			want: Accounting{CoveredEntityName: "Example Health Plan", CoveredEntityAddress: []string{"1 Main Street", "Suite 200", "Springfield, IL 62701"},
				PrivacyOfficerContact: "Jo Roe, privacy@example.org, +1 555 0100"},
		},
		{
			name:      "address lines split at new lines, empty ones left out",
			env:       map[string]string{"LOOKUP_COVERED_ENTITY_ADDRESS": "1 Main Street\n\n Springfield, IL 62701\n"},
			want:      Accounting{CoveredEntityAddress: []string{"1 Main Street", "Springfield, IL 62701"}},
			wantUnset: []string{"LOOKUP_COVERED_ENTITY_NAME", "LOOKUP_PRIVACY_OFFICER_CONTACT"},
		},
		{
			name: "flags over variables",
			env:  map[string]string{"LOOKUP_COVERED_ENTITY_NAME": "Old Name", "LOOKUP_PRIVACY_OFFICER_CONTACT": "old@example.org"},
			args: []string{"--covered-entity-name", "New Name", "--covered-entity-address", "2 High Street;Townsville", "--privacy-officer-contact", "new@example.org"},
			want: Accounting{CoveredEntityName: "New Name", CoveredEntityAddress: []string{"2 High Street", "Townsville"}, PrivacyOfficerContact: "new@example.org"},
		},
		{
			name:      "an address of separators only is unset",
			env:       map[string]string{"LOOKUP_COVERED_ENTITY_ADDRESS": " ; ;"},
			wantUnset: all,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(AuditServe, tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			got := Accounting{CoveredEntityName: cfg.CoveredEntityName, CoveredEntityAddress: cfg.CoveredEntityAddress, PrivacyOfficerContact: cfg.PrivacyOfficerContact}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("letterhead %#v, want %#v", got, tt.want)
			}
			if unset := cfg.LetterheadUnset(); !reflect.DeepEqual(unset, tt.wantUnset) {
				t.Errorf("LetterheadUnset = %v, want %v", unset, tt.wantUnset)
			}
		})
	}
}

// TestLetterheadSettingsRefused: a name or contact of more than one line
// or too long, an address of too many lines, and the settings in a
// command other than audit serve are usage errors.
func TestLetterheadSettingsRefused(t *testing.T) {
	tests := []struct {
		name    string
		in      Commands
		env     map[string]string
		args    []string
		wantMsg string
	}{
		{"name of two lines", AuditServe, map[string]string{"LOOKUP_COVERED_ENTITY_NAME": "Example\nHealth"}, nil, "covered entity name"},
		{"contact too long", AuditServe, map[string]string{"LOOKUP_PRIVACY_OFFICER_CONTACT": strings.Repeat("x", 201)}, nil, "at most 200 characters"},
		{"address of nine lines", AuditServe, map[string]string{"LOOKUP_COVERED_ENTITY_ADDRESS": strings.Repeat("a;", 9)}, nil, "9 lines, want at most 8"},
		{"address line with a tab", AuditServe, nil, []string{"--covered-entity-address", "1 Main\tStreet"}, "covered entity address"},
		{"not a setting of serve", Serve, nil, []string{"--covered-entity-name", "Example"}, "covered-entity-name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.in, tt.env, tt.args...)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want a usage error naming %q", err, tt.wantMsg)
			}
		})
	}
}

// TestWarnLetterhead: one warning naming the unset settings of the
// letterhead, none when it is whole.
func TestWarnLetterhead(t *testing.T) {
	tests := []struct {
		name string
		acc  Accounting
		want string // "": no warning
	}{
		{"whole", Accounting{CoveredEntityName: "E", CoveredEntityAddress: []string{"1 Main Street"}, PrivacyOfficerContact: "c"}, ""},
		{"contact unset", Accounting{CoveredEntityName: "E", CoveredEntityAddress: []string{"1 Main Street"}}, "set LOOKUP_PRIVACY_OFFICER_CONTACT"},
		{"unset", Accounting{}, "set LOOKUP_COVERED_ENTITY_NAME, LOOKUP_COVERED_ENTITY_ADDRESS, LOOKUP_PRIVACY_OFFICER_CONTACT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.acc.WarnLetterhead(slog.New(slog.NewTextHandler(&buf, nil)))
			logs := buf.String()
			if tt.want == "" && logs != "" {
				t.Errorf("logged %q, want nothing", logs)
			}
			if tt.want != "" && (strings.Count(logs, "level=WARN") != 1 || strings.Count(logs, "\n") != 1 || !strings.Contains(logs, tt.want)) {
				t.Errorf("logged %q, want one warning with %q", logs, tt.want)
			}
		})
	}
}
