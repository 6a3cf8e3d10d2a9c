package events

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
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

// BenchmarkDecodeDistinct decodes signer upserts with every field set, as
// BenchmarkDecode, but 1024 different ones in turn (ids, names, address,
// phone, SSN and date of birth differ), so that no string is decoded twice
// in a row, as on the stream.
func BenchmarkDecodeDistinct(b *testing.B) { benchDecodeDistinct(b, false) }

// BenchmarkDecodeDistinctEncoded is BenchmarkDecodeDistinct on the bodies
// as Encode (and so the Publisher) writes them: the type attribute before
// data, so that data is read in the same pass as the attributes.
func BenchmarkDecodeDistinctEncoded(b *testing.B) { benchDecodeDistinct(b, true) }

func benchDecodeDistinct(b *testing.B, encoded bool) {
	const n = 1024
	bodies, subjects := make([][]byte, n), make([]string, n)
	for i := range n {
		env := sampleEnvelope(TypeSignerUpserted)
		sid, cid := uuid.NewString(), uuid.NewString()
		for path, v := range map[string]string{
			"id": uuid.NewString(), "data.signer_id": sid, "data.consumer_id": cid,
			"data.first_name": fmt.Sprint("Alan", i), "data.middle_name": fmt.Sprint("Mathison", i), "data.last_name": fmt.Sprint("Turing", i),
			"data.address.line1": fmt.Sprint(i, " Main St"), "data.address.city": fmt.Sprint("Springfield", i),
			"data.phone.number": fmt.Sprint(5550000 + i), "data.social_security_number": fmt.Sprintf("123-45-%04d", i),
			"data.date_of_birth": fmt.Sprintf("19%02d-01-%02d", i%100, 1+i%28),
		} {
			setPath(env, path, v)
		}
		bodies[i], subjects[i] = mustJSON(b, env), SubjectPrefixSigner+cid+"."+sid
		ev, err := Decode(subjects[i], bodies[i])
		if err != nil {
			b.Fatal(err)
		}
		if encoded {
			if bodies[i], err = Encode(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(int64(len(bodies[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Decode(subjects[i%n], bodies[i%n]); err != nil {
			b.Fatal(err)
		}
		i++
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

// BenchmarkDecodeBinary decodes BenchmarkDecode's event in binary content
// mode (its attributes in ce- headers, data as the body), as the
// CloudEvents SDKs publish by default: it must cost no more CPU than the
// structured mode's decode of the same event.
func BenchmarkDecodeBinary(b *testing.B) {
	h, data, ok := toBinary(mustJSON(b, sampleEnvelope(TypeSignerUpserted)))
	if !ok {
		b.Fatal("the sample cannot be put in binary mode")
	}
	subject := sampleSubject(TypeSignerUpserted)
	if _, err := DecodeMsg(subject, h, data); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMsg(subject, h, data); err != nil {
			b.Fatal(err)
		}
	}
}
