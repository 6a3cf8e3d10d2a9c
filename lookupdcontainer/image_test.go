package lookupdcontainer_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lookup/persons/lookupdcontainer"
)

// TestDefaultNATSImageIsTheServiceVersion: the NATS image is the version
// of nats-server the service's go.mod pins, which `make images` tags.
func TestDefaultNATSImageIsTheServiceVersion(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/nats-io/nats-server/v2 (v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod does not require nats-server")
	}
	if want := "lookup/nats-server:" + string(m[1]); lookupdcontainer.DefaultNATSImage != want {
		t.Fatalf("DefaultNATSImage = %s, want %s", lookupdcontainer.DefaultNATSImage, want)
	}
}

// TestDefaultImageFromACheckout: built through a replace directive, the
// module has no version, and its default is the image make images tags dev.
func TestDefaultImageFromACheckout(t *testing.T) {
	if got := lookupdcontainer.DefaultImage(); !strings.HasPrefix(got, lookupdcontainer.ImageRepository+":") || got != "lookup/lookupd:dev" {
		t.Fatalf("DefaultImage() = %s", got)
	}
}
