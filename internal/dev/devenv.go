// The dev environment: it sets up what "lookupd dev" runs the serve stack against:
// a data directory, an in-process NATS JetStream server (devnats) with the
// demo data set published to its stream (Seed), and the dev signing
// key (devkey) with the JWKS of its public half. cmd/lookupd wires the
// serve stack onto it.

package dev

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/redact"
)

// EnvConfig is what Start sets up.
type EnvConfig struct {
	// DataDir holds the NATS store and the dev key; "" means a temporary
	// directory, removed by Close, and the per-user dev key.
	DataDir string
	// Stream is the events stream the demo data set is published to.
	Stream string
	// Getenv locates the per-user dev key (Path).
	Getenv func(string) string
	Logger *slog.Logger
}

// Env is a started dev environment. Close it.
type Env struct {
	// Dir is the data directory; Temp says Close removes it.
	Dir  string
	Temp bool
	// NATSURL is the in-process NATS server's client URL.
	NATSURL string
	// Data is the demo data set published to the stream.
	Data *DemoData
	// KeyPath is the dev key's file; Key the key; JWKS the JWKS of its
	// public half (also written into Dir) and Keys that JWKS read back
	// from its file, to verify tokens.
	KeyPath string
	Key     *rsa.PrivateKey
	JWKS    []byte
	Keys    *auth.JWKS

	nats *NATSServer
}

// StartEnv creates (or reuses) the data directory, starts NATS in it,
// publishes the demo data set to cfg.Stream and loads (or creates) the
// dev key. On error, what it had set up is torn down again.
func StartEnv(ctx context.Context, cfg EnvConfig) (_ *Env, err error) {
	e := &Env{Dir: cfg.DataDir, Temp: cfg.DataDir == ""}
	if e.Temp {
		if e.Dir, err = os.MkdirTemp("", "lookupd-dev-"); err != nil {
			return nil, fmt.Errorf("dev data directory: %w", err)
		}
	} else if err := os.MkdirAll(e.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("dev data directory: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Close())
		}
	}()
	if e.nats, err = StartNATS("lookupd-dev", filepath.Join(e.Dir, "nats")); err != nil {
		return nil, err
	}
	e.NATSURL = e.nats.URL
	cfg.Logger.Info("dev NATS server started", "url", redact.URLs(e.NATSURL))
	if e.Data, err = NewDemoData(); err != nil {
		return nil, fmt.Errorf("demo data: %w", err)
	}
	if err := SeedDemo(ctx, e.NATSURL, cfg.Stream, e.Data, cfg.Logger); err != nil {
		return nil, err
	}
	e.KeyPath = KeyPath(cfg.Getenv, e.Dir, !e.Temp)
	if err := e.loadKey(cfg.Logger); err != nil {
		return nil, err
	}
	return e, nil
}

// loadKey loads (or creates) the dev key at e.KeyPath and writes the JWKS
// of its public half into e.Dir.
func (e *Env) loadKey(logger *slog.Logger) error {
	key, err := LoadOrCreateKey(e.KeyPath)
	if err != nil {
		return err
	}
	keyfile.WarnLoose(logger, keyfile.Secret("dev signing key (--data-dir)", e.KeyPath))
	jwks, jwksPath, err := WriteJWKS(key, e.Dir)
	if err != nil {
		return err
	}
	keys, err := auth.LoadJWKSFile(jwksPath)
	if err != nil {
		return fmt.Errorf("dev JWKS: %w", err)
	}
	e.Key, e.JWKS, e.Keys = key, jwks, keys
	return nil
}

// JWKSHandler serves e.JWKS (for /.well-known/jwks.json), never cached.
func (e *Env) JWKSHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(e.JWKS)
	})
}

// Close stops NATS and, when Temp, removes the data directory; its error
// is the removal's.
func (e *Env) Close() error {
	if e.nats != nil {
		e.nats.Close()
		e.nats = nil
	}
	if e.Temp {
		if err := os.RemoveAll(e.Dir); err != nil {
			return fmt.Errorf("remove dev data directory: %w", err)
		}
	}
	return nil
}
