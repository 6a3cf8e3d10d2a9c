package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
)

// alertRules is the shape of deploy/prometheus/alerts.yaml.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// lookupMetric matches the names of lookupd's own metrics in an expression.
var lookupMetric = regexp.MustCompile(`\blookup_[a-z0-9_]+`)

// TestAlertRulesNameExportedMetrics: every metric an alert rule names is
// one a running lookupd exports (scraped from its /metrics: the
// accounting index's from lookupd audit serve, every other from serve),
// and every rule has a severity and a summary. promtool, when installed,
// checks the file too.
func TestAlertRulesNameExportedMetrics(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "prometheus", "alerts.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	exported := exportedMetrics(t)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %q lacks an alert name, a severity label or a summary", r.Alert)
			}
			names := lookupMetric.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("rule %s names no lookupd metric: %s", r.Alert, r.Expr)
			}
			for _, name := range names {
				if role, ok := exported.exports(name); !ok {
					t.Errorf("rule %s names %s, which %s does not export", r.Alert, name, role)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no rules")
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
	}
}

// accountingPrefix begins the names of the metrics of the accounting
// index, which lookupd audit serve exports and serve does not.
const accountingPrefix = "lookup_accounting_"

// exporters holds the names of the series each role's /metrics exposes.
type exporters struct {
	serve, auditServe map[string]bool
}

// exports reports whether the role that owns the metric name exports it:
// lookupd audit serve for the accounting index's metrics, serve for every
// other; role names it for a message.
func (e exporters) exports(name string) (role string, ok bool) {
	if strings.HasPrefix(name, accountingPrefix) {
		return "lookupd audit serve", e.auditServe[name]
	}
	return "lookupd serve", e.serve[name]
}

// exportedMetrics runs serve, answers one API request, runs audit serve
// on the same NATS server once a disclosure is in the audit stream, and
// returns the names of the series each one's /metrics exposes.
func exportedMetrics(t *testing.T) exporters {
	t.Helper()
	ns := runNATS(t)
	js := jetStream(t, ns)
	createStream(t, js, "PERSONS")
	id := dev.DemoID("t-consumer", 0)
	publish(t, js, events.Consumer{ConsumerID: id, BusinessID: dev.DemoID("business", 0), FirstName: "A", LastName: "B"})
	p := start(t, serveEnv(t, ns, t.TempDir()), "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	if _, _, err := get("http://"+addrs["api"]+"/api/v1/persons/"+id, tok); err != nil {
		t.Fatal(err)
	}
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", ada, 1)
	acct := startAuditServe(t, ns.ClientURL())
	return exporters{serve: scrapeMetrics(t, addrs["admin"]), auditServe: scrapeMetrics(t, acct["admin"])}
}

// scrapeMetrics returns the names of the series the /metrics of the admin
// listener at addr exposes (histograms with their _bucket, _sum and
// _count series).
func scrapeMetrics(t *testing.T, addr string) map[string]bool {
	t.Helper()
	_, body, err := get("http://"+addr+"/metrics", "")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, _, _ := strings.Cut(rest, " ")
			names[name] = true
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		names[name] = true
	}
	return names
}

// TestDashboardNamesExportedMetrics: every lookupd metric a panel of
// deploy/grafana/lookupd.json queries is one a running lookupd exports
// (the accounting index's from lookupd audit serve).
func TestDashboardNamesExportedMetrics(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "grafana", "lookupd.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(dash.Panels) == 0 {
		t.Fatal("no panels")
	}
	exported := exportedMetrics(t)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, name := range lookupMetric.FindAllString(q.Expr, -1) {
				if role, ok := exported.exports(name); !ok {
					t.Errorf("panel %q queries %s, which %s does not export", p.Title, name, role)
				}
			}
		}
	}
}
