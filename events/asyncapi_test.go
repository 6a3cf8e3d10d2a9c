package events

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	asyncapischemas "github.com/asyncapi/spec-json-schemas/v6"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// asyncAPIDoc is the part of asyncapi.yaml the tests read beyond the
// validation against the AsyncAPI schema.
type asyncAPIDoc struct {
	Channels map[string]struct {
		Address  string                       `json:"address"`
		Messages map[string]map[string]string `json:"messages"` // name -> {"$ref": ...}
	} `json:"channels"`
	Components struct {
		Messages map[string]struct {
			Name    string `json:"name"`
			Payload struct {
				SchemaFormat string            `json:"schemaFormat"`
				Schema       map[string]string `json:"schema"` // {"$ref": ...}
			} `json:"payload"`
			Examples []struct {
				Headers map[string]string `json:"headers"`
				Payload json.RawMessage   `json:"payload"`
			} `json:"examples"`
		} `json:"messages"`
	} `json:"components"`
}

// loadAsyncAPI reads asyncapi.yaml and returns it as JSON.
func loadAsyncAPI(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("asyncapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("asyncapi.yaml is not YAML: %v", err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("asyncapi.yaml does not convert to JSON: %v", err)
	}
	return j
}

// TestAsyncAPIIsValid validates asyncapi.yaml against the AsyncAPI 3.0.0
// JSON Schema published by the AsyncAPI Initiative.
func TestAsyncAPIIsValid(t *testing.T) {
	raw, err := asyncapischemas.Get("3.0.0")
	if err != nil || raw == nil {
		t.Fatalf("AsyncAPI 3.0.0 schema: %v (found: %t)", err, raw != nil)
	}
	meta, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://asyncapi.test/3.0.0.json"
	if err := c.AddResource(url, meta); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile the AsyncAPI schema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(loadAsyncAPI(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("asyncapi.yaml is not a valid AsyncAPI 3.0.0 document:\n%v", err)
	}
	// The validator must be able to fail: a document without info is not.
	delete(doc.(map[string]any), "info")
	if sch.Validate(doc) == nil {
		t.Fatal("the AsyncAPI schema accepted a document without info")
	}
}

// TestAsyncAPIUsesTheSchemas checks that each event type has one message
// whose payload is its JSON Schema in schema/, on the channel of its
// subject, with examples valid under that schema and under Decode.
func TestAsyncAPIUsesTheSchemas(t *testing.T) {
	var doc asyncAPIDoc
	if err := json.Unmarshal(loadAsyncAPI(t), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := compileSchemas(t)
	// channel address (parameters replaced by a prefix match) of each message.
	channelOf := map[string]string{}
	for _, ch := range doc.Channels {
		for _, ref := range ch.Messages {
			channelOf[strings.TrimPrefix(ref["$ref"], "#/components/messages/")] = ch.Address
		}
	}
	var seen []Type
	for key, m := range doc.Components.Messages {
		ref := m.Payload.Schema["$ref"]
		if !strings.HasPrefix(ref, "./schema/") {
			continue // not an event of the contract (the dead letter)
		}
		typ := Type(m.Name)
		t.Run(string(typ), func(t *testing.T) {
			if !slices.Contains(Types, typ) {
				t.Fatalf("message %s is named %q, not an event type", key, typ)
			}
			if want := "./schema/" + SchemaName(typ); ref != want {
				t.Errorf("payload $ref = %q, want %q", ref, want)
			}
			if _, err := fs.Stat(Schemas, strings.TrimPrefix(ref, "./schema/")); err != nil {
				t.Errorf("payload $ref %q names no schema: %v", ref, err)
			}
			if m.Payload.SchemaFormat != "application/schema+json;version=draft-2020-12" {
				t.Errorf("schemaFormat = %q, want the JSON Schema draft of the schemas", m.Payload.SchemaFormat)
			}
			addr := channelOf[key]
			prefix, _, _ := strings.Cut(addr, "{")
			if addr == "" || !strings.HasPrefix(string(typ), strings.TrimSuffix(prefix, ".")+".") {
				t.Errorf("message is on channel %q, want the subjects of %s", addr, typ)
			}
			if len(m.Examples) == 0 {
				t.Fatal("no example")
			}
			for i, ex := range m.Examples {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(ex.Payload))
				if err != nil {
					t.Fatalf("example %d: %v", i, err)
				}
				if err := schemas[typ].Validate(inst); err != nil {
					t.Errorf("example %d does not match %s: %v", i, SchemaName(typ), err)
				}
				var ce struct{ Data map[string]any }
				_ = json.Unmarshal(ex.Payload, &ce)
				ev, err := Decode(exampleSubject(addr, ce.Data), ex.Payload)
				if err != nil {
					t.Errorf("example %d: Decode: %v", i, err)
				} else if ex.Headers["Nats-Msg-Id"] != ev.ID {
					t.Errorf("example %d: Nats-Msg-Id %q, want the event id %q", i, ex.Headers["Nats-Msg-Id"], ev.ID)
				}
			}
		})
		seen = append(seen, typ)
	}
	slices.Sort(seen)
	want := slices.Clone(Types)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("messages for %v, want one for each of %v", seen, want)
	}
}

// exampleSubject fills the parameters of a channel address from data.
func exampleSubject(addr string, data map[string]any) string {
	for k, v := range data {
		if s, ok := v.(string); ok {
			addr = strings.ReplaceAll(addr, "{"+k+"}", s)
		}
	}
	return addr
}
