package testkit

import (
	"strings"
	"testing"
)

func TestJSONCapturesDebug(t *testing.T) {
	log, buf := JSONLogger()
	log.Debug("hello", "k", "v")
	if got := buf.String(); !strings.Contains(got, `"msg":"hello"`) || !strings.Contains(got, `"k":"v"`) {
		t.Fatalf("got %q, want a JSON line with msg hello and k=v", got)
	}
}
