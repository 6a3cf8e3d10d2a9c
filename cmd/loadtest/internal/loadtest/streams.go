package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"
)

// The streams as operators apply them ("nats stream add --config"), files
// of the repository's deploy/streams: the tool's brokers hold the same.
const (
	PersonsStreamFile = "persons.json"       // the source stream
	AuditStreamFile   = "persons_audit.json" // the audit ledger's
)

// DeployedStream returns the stream definition in file, one of the
// repository's deploy/streams, named name. The repository is the first
// directory at or above the working directory, or else above this
// program's, whose deploy/streams holds file: the tool runs from the
// repository (make loadtest) or from bin/ in it.
func DeployedStream(file, name string) (jetstream.StreamConfig, error) {
	var cfg jetstream.StreamConfig
	path, err := repoFile(filepath.Join("deploy", "streams", file))
	if err != nil {
		return cfg, err
	}
	b, err := os.ReadFile(path) //nolint:gosec // G304: the repository's stream definition
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	cfg.Name = name
	return cfg, nil
}

// EnsurePersonsStream creates the source stream name as deployed on js,
// or brings an existing one (a model kept between runs) to it.
func EnsurePersonsStream(ctx context.Context, js jetstream.JetStream, name string) error {
	cfg, err := DeployedStream(PersonsStreamFile, name)
	if err != nil {
		return err
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("create stream %s: %w", name, err)
	}
	return nil
}

// repoFile returns the path of rel in the repository (see DeployedStream).
func repoFile(rel string) (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			path := filepath.Join(dir, rel)
			if _, err := os.Stat(path); err == nil {
				return path, nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("%s: not found at or above %q: run the tool from the repository", rel, starts)
}
