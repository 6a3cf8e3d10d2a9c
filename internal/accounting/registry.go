package accounting

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Registry names what the ledger holds as codes: the clients (a token's
// azp or client_id) as organisations with a postal address, valid over a
// span of days, and the purposes (a caller's Lookup-Purpose) as a plain
// statement, accountable or exempt under 45 CFR 164.528(a)(1). It is read
// from two YAML files a privacy office edits and reviews (docs/audit.md,
// deploy/registries/); the zero Registry knows no code. It is read-only
// once loaded, so safe for concurrent use.
type Registry struct {
	clients  map[string][]Recipient // each id's entries, by From
	purposes map[string]Purpose
}

// Recipient is one entry of the clients registry: what client ID stood for
// from From to To (days, To inclusive; a zero To: still valid).
type Recipient struct {
	ID, Organisation, Address string
	From, To                  time.Time
	Line                      int // in the file
}

// Purpose is one entry of the purposes registry.
type Purpose struct {
	Code, Statement string
	// Exempt: a disclosure for this purpose need not be accounted for
	// (164.528(a)(1): treatment, payment, operations, ...).
	Exempt bool
	Line   int
}

// covers reports whether c was valid at t.
func (c Recipient) covers(t time.Time) bool {
	return !t.Before(c.From) && (c.To.IsZero() || t.Before(c.To.AddDate(0, 0, 1)))
}

// LoadRegistry reads the clients file and the purposes file ("" for
// none). A file that cannot be read, a malformed or duplicate entry, or
// two entries of a client whose days overlap, is an error naming the file
// and the line.
func LoadRegistry(clientsFile, purposesFile string) (*Registry, error) {
	r := &Registry{clients: map[string][]Recipient{}, purposes: map[string]Purpose{}}
	if clientsFile != "" {
		if err := r.loadClients(clientsFile); err != nil {
			return nil, err
		}
	}
	if purposesFile != "" {
		if err := r.loadPurposes(purposesFile); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Client returns the entry of client id valid at t.
func (r *Registry) Client(id string, t time.Time) (Recipient, bool) {
	if r == nil {
		return Recipient{}, false
	}
	for _, c := range r.clients[id] {
		if c.covers(t) {
			return c, true
		}
	}
	return Recipient{}, false
}

// HasClient reports whether the registry has an entry of client id.
func (r *Registry) HasClient(id string) bool { return r != nil && len(r.clients[id]) > 0 }

// Purpose returns the entry of the purpose code.
func (r *Registry) Purpose(code string) (Purpose, bool) {
	if r == nil {
		return Purpose{}, false
	}
	p, ok := r.purposes[code]
	return p, ok
}

// ClientIDs returns the client ids the registry knows, sorted.
func (r *Registry) ClientIDs() []string {
	if r == nil {
		return nil
	}
	return sortedKeys(r.clients)
}

// PurposeCodes returns the purpose codes the registry knows, sorted.
func (r *Registry) PurposeCodes() []string {
	if r == nil {
		return nil
	}
	return sortedKeys(r.purposes)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// entries parses file as a YAML mapping whose one key, top, holds a
// sequence of mappings, and returns them.
func entries(file, top string) ([]*yaml.Node, error) {
	data, err := os.ReadFile(file) //nolint:gosec // G304: the operator's file, named in a setting
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode || len(doc.Content[0].Content) != 2 ||
		doc.Content[0].Content[0].Value != top || doc.Content[0].Content[1].Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: want one key, %s, holding a list of entries", file, max(doc.Line, 1), top)
	}
	list := doc.Content[0].Content[1].Content
	for _, n := range list {
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: an entry must be a mapping of fields", file, n.Line)
		}
	}
	return list, nil
}

// fields returns the scalar fields of the entry n, refusing a field not
// in known, one given twice, one that is not a scalar, and a missing
// required one (known: name -> required).
func fields(file string, n *yaml.Node, known map[string]bool) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, ok := known[k.Value]; !ok {
			return nil, fmt.Errorf("%s:%d: unknown field %q (want %s)", file, k.Line, k.Value, strings.Join(sortedKeys(known), ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("%s:%d: field %q given twice", file, k.Line, k.Value)
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s:%d: field %q must be a single value", file, v.Line, k.Value)
		}
		out[k.Value] = strings.TrimSpace(v.Value)
	}
	for _, name := range sortedKeys(known) {
		if known[name] && out[name] == "" {
			return nil, fmt.Errorf("%s:%d: field %q is required", file, n.Line, name)
		}
	}
	return out, nil
}

var clientFields = map[string]bool{"id": true, "organisation": true, "address": true, "valid_from": true, "valid_to": false}

// loadClients reads the clients file into r.
func (r *Registry) loadClients(file string) error {
	list, err := entries(file, "clients")
	if err != nil {
		return fmt.Errorf("clients file %w", err)
	}
	for _, n := range list {
		f, err := fields(file, n, clientFields)
		if err != nil {
			return fmt.Errorf("clients file %w", err)
		}
		c := Recipient{ID: f["id"], Organisation: f["organisation"], Address: f["address"], Line: n.Line}
		if !IsCode(c.ID) {
			return fmt.Errorf("clients file %s:%d: id %q: want 1 to 64 visible ASCII characters", file, n.Line, c.ID)
		}
		if c.From, err = time.Parse(time.DateOnly, f["valid_from"]); err != nil {
			return fmt.Errorf("clients file %s:%d: valid_from %q: want a date YYYY-MM-DD", file, n.Line, f["valid_from"])
		}
		if to := f["valid_to"]; to != "" {
			if c.To, err = time.Parse(time.DateOnly, to); err != nil || c.To.Before(c.From) {
				return fmt.Errorf("clients file %s:%d: valid_to %q: want a date YYYY-MM-DD, not before valid_from", file, n.Line, to)
			}
		}
		for _, o := range r.clients[c.ID] {
			if overlap(o, c) {
				return fmt.Errorf("clients file %s:%d: client %q: its days overlap those of the entry at line %d", file, n.Line, c.ID, o.Line)
			}
		}
		r.clients[c.ID] = append(r.clients[c.ID], c)
		slices.SortFunc(r.clients[c.ID], func(a, b Recipient) int { return a.From.Compare(b.From) })
	}
	return nil
}

// overlap reports whether the days of a and b overlap.
func overlap(a, b Recipient) bool {
	aEndsBeforeB := !a.To.IsZero() && a.To.Before(b.From)
	bEndsBeforeA := !b.To.IsZero() && b.To.Before(a.From)
	return !aEndsBeforeB && !bEndsBeforeA
}

var purposeFields = map[string]bool{"code": true, "statement": true, "accounting": true}

// loadPurposes reads the purposes file into r.
func (r *Registry) loadPurposes(file string) error {
	list, err := entries(file, "purposes")
	if err != nil {
		return fmt.Errorf("purposes file %w", err)
	}
	for _, n := range list {
		f, err := fields(file, n, purposeFields)
		if err != nil {
			return fmt.Errorf("purposes file %w", err)
		}
		p := Purpose{Code: f["code"], Statement: f["statement"], Line: n.Line}
		if !IsCode(p.Code) {
			return fmt.Errorf("purposes file %s:%d: code %q: want 1 to 64 visible ASCII characters (as Lookup-Purpose)", file, n.Line, p.Code)
		}
		switch f["accounting"] {
		case "accountable":
		case "exempt":
			p.Exempt = true
		default:
			return fmt.Errorf("purposes file %s:%d: accounting %q: want accountable or exempt", file, n.Line, f["accounting"])
		}
		if o, dup := r.purposes[p.Code]; dup {
			return fmt.Errorf("purposes file %s:%d: code %q given twice (first at line %d)", file, n.Line, p.Code, o.Line)
		}
		r.purposes[p.Code] = p
	}
	return nil
}

// IsCode reports whether s is 1 to 64 visible ASCII characters, the rule
// of Lookup-Purpose (and of the client ids tokens carry, in practice).
func IsCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// ErrUnknownCodes is returned by Registry.Check when the ledger holds
// codes the registry lacks.
var ErrUnknownCodes = errors.New("accounting: the ledger holds codes the registries lack")

// Check returns ErrUnknownCodes, with the codes, when clients or purposes
// (the codes of the ledger, Index.Codes) hold a code the registry lacks
// ("" is no code: a token without a client, a request without a
// purpose).
func (r *Registry) Check(clients, purposes []string) error {
	var missing []string
	for _, c := range clients {
		if c != "" && !r.HasClient(c) {
			missing = append(missing, "client "+c)
		}
	}
	for _, p := range purposes {
		if _, ok := r.Purpose(p); p != "" && !ok {
			missing = append(missing, "purpose "+p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnknownCodes, strings.Join(missing, ", "))
}
