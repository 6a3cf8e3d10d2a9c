package events

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecode decodes a signer upsert with every field set, the
// heaviest event of the contract, on its subject.
func BenchmarkDecode(b *testing.B) {
	body := mustJSON(b, sampleEnvelope(TypeSignerUpserted))
	subject := sampleSubject(TypeSignerUpserted)
	if _, err := Decode(subject, body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(subject, body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalBaseline is the floor Decode is measured against:
// encoding/json decoding the same body into a generic map, with no
// validation at all.
func BenchmarkUnmarshalBaseline(b *testing.B) {
	body := mustJSON(b, sampleEnvelope(TypeSignerUpserted))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalStructBaseline is the floor of a decoder built on
// encoding/json with typed structs: the same body into the envelope and
// Signer structs, with no validation at all. (The first Decode, built that
// way with validation, took 1.6 times the map baseline and 49 allocations.)
func BenchmarkUnmarshalStructBaseline(b *testing.B) {
	body := mustJSON(b, sampleEnvelope(TypeSignerUpserted))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var e struct {
			SpecVersion     string `json:"specversion"`
			ID              string `json:"id"`
			Source          string `json:"source"`
			Type            string `json:"type"`
			Time            string `json:"time"`
			DataContentType string `json:"datacontenttype"`
			EntityVersion   uint64 `json:"entityversion"`
			Data            Signer `json:"data"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode encodes a signer upsert with every field set.
func BenchmarkEncode(b *testing.B) {
	ev, err := Decode(sampleSubject(TypeSignerUpserted), mustJSON(b, sampleEnvelope(TypeSignerUpserted)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}
