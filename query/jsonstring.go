package query

import "github.com/lookup/persons/internal/jsonstr"

// The answers are encoded by hand (resources.go, problem.go) rather than
// by encoding/json, whose reflection costs a dozen allocations a request.
// They stay byte for byte what json.Marshal wrote before: a test holds
// them to it (TestEncodingMatchesEncodingJSON here, FuzzAppend in internal/jsonstr).

// appendJSONField appends `"name":` and s as a JSON string; name must
// need no escaping. A comma is written first unless first is true.
func appendJSONField(dst []byte, first bool, name, s string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return jsonstr.Append(dst, s)
}
