package officer

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/accountingtest"
)

// letterheadOf returns the option of the officer's fixture that sets
// its letterhead to l.
func letterheadOf(l Letterhead) func(*Config) { return func(c *Config) { c.Letterhead = l } }

// exampleLetterhead is a whole letterhead, as the settings give it.
var exampleLetterhead = Letterhead{Name: "Example & Sons Health Plan", Address: []string{"1 Main Street", "Suite 200", "Springfield, IL 62701"},
	Contact: "Jo Roe, privacy@example.org, 555 0100"}

// unsetLetterhead are the settings of the letterhead, as audit serve
// names them when none is set (settings.Accounting.LetterheadUnset).
var unsetLetterhead = []string{"LOOKUP_COVERED_ENTITY_NAME", "LOOKUP_COVERED_ENTITY_ADDRESS", "LOOKUP_PRIVACY_OFFICER_CONTACT"}

// TestLetterhead: the letter's sender, HTML-escaped, above the person's
// address; what is unset is not printed, and a notice names the settings
// to set.
func TestLetterhead(t *testing.T) {
	ds := []accountingtest.Disclosure{{I: 0, At: time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC), Person: accountingtest.Persons[0],
		Client: "onboarding", Purpose: "LEGAL", Op: "getPerson"}}
	tests := []struct {
		name         string
		head         Letterhead
		want, absent []string
	}{
		{
			name: "whole",
			head: Letterhead{Name: `Example & <Health> Plan`, Address: []string{"1 Main Street", `Suite "200"`, "Springfield, IL 62701"},
				Contact: `Jo Roe <privacy@example.org>, +1 555 0100`},
			want: []string{`<header class="letterhead">`, `<p class="entity">Example &amp; &lt;Health&gt; Plan</p>`,
				`<address class="from">1 Main Street<br>Suite &#34;200&#34;<br>Springfield, IL 62701</address>`,
				`<p class="contact">Privacy officer: Jo Roe &lt;privacy@example.org&gt;, &#43;1 555 0100</p>`},
			absent: []string{`class="notice"`, "<Health>", "<privacy@"},
		},
		{
			name:   "unset",
			head:   Letterhead{Unset: unsetLetterhead},
			want:   []string{`<p class="notice" role="note">`, "set LOOKUP_COVERED_ENTITY_NAME, LOOKUP_COVERED_ENTITY_ADDRESS, LOOKUP_PRIVACY_OFFICER_CONTACT for lookupd audit serve"},
			absent: []string{`class="letterhead"`, "Privacy officer:"},
		},
		{
			name:   "name only",
			head:   Letterhead{Name: "Example Health Plan", Unset: unsetLetterhead[1:]},
			want:   []string{`<p class="entity">Example Health Plan</p>`, "set LOOKUP_COVERED_ENTITY_ADDRESS, LOOKUP_PRIVACY_OFFICER_CONTACT for"},
			absent: []string{`class="from"`, "Privacy officer:", "set LOOKUP_COVERED_ENTITY_NAME"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOfficerFixtureOf(t, 10, ds, letterheadOf(tt.head))
			rec := postLetter(f.h, letterOf(accountingtest.Persons[0], "2026-11-20"))
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, "Reference "+ds[0].Reference()) {
				t.Fatalf("POST = %d %s", rec.Code, body)
			}
			for _, s := range tt.want {
				if !strings.Contains(body, s) {
					t.Errorf("the letter lacks %q", s)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(body, s) {
					t.Errorf("the letter holds %q", s)
				}
			}
			if head, to := strings.Index(body, `class="letterhead"`), strings.Index(body, `class="to"`); head > to {
				t.Error("the letterhead is below the person's address")
			}
		})
	}
}
