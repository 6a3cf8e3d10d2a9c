package jsonstr

import (
	"encoding/json"
	"testing"
)

// awkward are strings that exercise every branch of Append.
var awkward = []string{
	"", "plain", "a\"b\\c\n\r\t\b\f\x01\x1f\x7f<>&", "café 世界 \U0001F600", "bad \xff\xfe utf-8 \xc3",
	"line\u2028para\u2029end", "head<", ">tail", "\xed\xa0\x80 surrogate", "3f0c8a4e-1b2d-4c5e-8f90-a1b2c3d4e5f6",
}

func TestAppendKeepsDst(t *testing.T) {
	if got, want := string(Append([]byte(`{"a":`), "x<")), `{"a":"x\u003c"`; got != want {
		t.Errorf("Append = %s, want %s", got, want)
	}
}

// FuzzAppend holds Append equal to json.Marshal for any string; go test
// runs it on the awkward strings (and testdata/fuzz).
func FuzzAppend(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Append(nil, s); string(got) != string(want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"uuid", "3f0c8a4e-1b2d-4c5e-8f90-a1b2c3d4e5f6"},
		{"name", "Margaret"},
		{"address", "123 Main Street, Apartment 4B, Springfield"},
		{"escapes", "a\"b<c>&d\ne"},
		{"utf8", "café 世界 Zoë"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			for b.Loop() {
				buf = Append(buf[:0], tc.s)
			}
		})
	}
}
