//go:build integration

package integration

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImages checks the images built by `make images`: a numeric non-root
// user, no shell, the volume and entrypoint the deployments rely on.
func TestImages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		image      string
		entrypoint string
		volume     string // "" when none
	}{
		{lookupdImage, "[/lookupd]", "/data"},
		{natsImage, "[/nats-server]", "/data"},
		{natscliImage, "[/nats]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			inspect := func(format string) string {
				t.Helper()
				out, err := exec.Command("docker", "image", "inspect", "-f", format, tt.image).CombinedOutput()
				if err != nil {
					t.Fatalf("inspect %s: %v: %s", tt.image, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			if got := inspect("{{.Config.User}}"); got != "65532:65532" {
				t.Errorf("user: got %q, want 65532:65532", got)
			}
			if got := inspect("{{.Config.Entrypoint}}"); got != tt.entrypoint {
				t.Errorf("entrypoint: got %s, want %s", got, tt.entrypoint)
			}
			vols := inspect("{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}")
			if tt.volume != "" && !strings.Contains(vols, tt.volume) {
				t.Errorf("volumes: got %q, want %s", vols, tt.volume)
			}
			out, err := exec.Command("docker", "run", "--rm", "--entrypoint", "/bin/sh", tt.image, "-c", "true").CombinedOutput()
			if err == nil {
				t.Errorf("/bin/sh ran in %s; the image must have no shell", tt.image)
			} else if !strings.Contains(string(out), "no such file") {
				t.Logf("running /bin/sh failed as expected, but with: %s", out)
			}
		})
	}
	t.Run("lookupd carries CA certificates", func(t *testing.T) {
		// A JWKS URL over HTTPS needs them; `docker cp` from a created (not
		// started) container reads the file without running anything.
		id, err := exec.Command("docker", "create", lookupdImage).Output()
		if err != nil {
			t.Fatalf("docker create: %v", err)
		}
		cid := strings.TrimSpace(string(id))
		defer func() { _ = exec.Command("docker", "rm", "-f", "-v", cid).Run() }()
		out, err := exec.Command("docker", "cp", cid+":/etc/ssl/certs/ca-certificates.crt", "-").Output()
		if err != nil {
			t.Fatalf("docker cp ca-certificates.crt: %v", err)
		}
		if !strings.Contains(string(out), "BEGIN CERTIFICATE") {
			t.Errorf("ca-certificates.crt holds no certificate (%d bytes of tar)", len(out))
		}
	})
}
