package query

import (
	"net/url"
	"reflect"
	"testing"
)

// FuzzParseQuery: parseQuery reads any query string as url.ParseQuery
// does, whether it takes its in-place path or not.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "consumer_id=x", "consumer_id=x&expand=A&ssn_mode=B", "a&&=b&a=1&consumer_id",
		"consumer_id=1&consumer_id=2", "x=%zz", "a+b=c%20d", "a;b=c", "=&=x&expand="} {
		f.Add(s)
	}
	known := []string{"consumer_id", "expand", "ssn_mode"}
	f.Fuzz(func(t *testing.T, raw string) {
		got, gotBad, gotOK := parseQuery(raw, known...)
		vals, err := url.ParseQuery(raw)
		if wantOK := err == nil; gotOK != wantOK {
			t.Fatalf("ok = %v, url.ParseQuery error %v", gotOK, err)
		}
		if !gotOK {
			return
		}
		var wantBad []invalidParam
		for name, vs := range vals {
			switch i := indexOf(known, name); {
			case i < 0:
				wantBad = append(wantBad, invalidParam{Name: name, Reason: reasonUnknown})
			case len(vs) > 1:
				wantBad = append(wantBad, invalidParam{Name: name, Reason: reasonRepeated})
			}
		}
		if sortParams(gotBad); !reflect.DeepEqual(gotBad, sortParams(wantBad)) && len(gotBad)+len(wantBad) > 0 {
			t.Errorf("bad = %v, want %v", gotBad, wantBad)
		}
		for _, name := range known {
			first, n := got.get(name)
			if vs := vals[name]; n != len(vs) || n > 0 && first != vs[0] {
				t.Errorf("%s = %q x%d, want %q", name, first, n, vs)
			}
		}
	})
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
