package auth

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"

	"github.com/lookup/persons/internal/periodic"
)

// The refresh rules of a URL key set:
//
//   - A background refresh runs every refresh interval; the start-up fetch
//     and the background ones never count against the unknown-kid
//     cool-down, so a key the identity provider adds after any of them is
//     accepted on the first token that names it.
//   - A token naming a kid the set does not hold triggers a refetch. It runs
//     on the set's own context (never the request's, so a caller that goes
//     away does not fail the fetch for the others), one at a time: callers
//     arriving meanwhile wait for that fetch (each no longer than its own
//     context allows; the fetch itself is bounded by jwksFetchTimeout).
//   - After an unknown-kid refetch ends (success or failure), the next one
//     waits minRefetch: a flood of tokens with unknown kids costs at most
//     one fetch per cool-down.
//   - No mutex is held across an HTTP call; an older fetch finishing after
//     a newer one never replaces the newer set.

// errCoolingDown says an unknown-kid refetch was skipped: the last one
// ended less than minRefetch ago.
var errCoolingDown = errors.New("jwks: unknown-kid refetch cooling down")

func (j *JWKS) refreshLoop(ctx context.Context, every time.Duration) {
	defer close(j.stopped)
	periodic.Every(ctx, every, func(time.Time) {
		// A failure keeps the current keys; the next tick tries again.
		if err := j.refresh(ctx); err != nil && ctx.Err() == nil {
			j.logFailure(ctx, "background", err)
		}
	})
}

// refresh fetches the key set now and installs it on success (start-up
// and background fetches: no cool-down involved).
func (j *JWKS) refresh(ctx context.Context) error {
	seq := j.fetchSeq.Add(1)
	ks, err := j.fetch(ctx)
	j.fetches.Add(1)
	if err != nil {
		return err
	}
	j.install(seq, ks)
	return nil
}

// candidates returns the keys that may verify a token signed with alg and
// naming kid ("" when the token names none). On an unknown kid a URL key
// set is refetched first (see the rules above). It returns no keys when
// ctx ends while it waits for that refetch.
func (j *JWKS) candidates(ctx context.Context, kid string, alg jwa.SignatureAlgorithm) []verifyKey {
	ks := j.current()
	if kid == "" {
		return filterAlg(ks.all, alg)
	}
	keys, known := ks.forKID(kid)
	if known || j.fetch == nil {
		return filterAlg(keys, alg)
	}
	done := j.unknownKid.DoChan("", func() (any, error) { return nil, j.refetchUnknownKid() })
	select {
	case <-done:
	case <-ctx.Done():
		return nil
	}
	keys, _ = j.current().forKID(kid)
	return filterAlg(keys, alg)
}

// refetchUnknownKid fetches the set for a token naming an unknown kid,
// unless the last such fetch ended less than minRefetch ago.
func (j *JWKS) refetchUnknownKid() error {
	j.mu.Lock()
	cooling := !j.lastKidFetchEnd.IsZero() && j.now().Sub(j.lastKidFetchEnd) < j.minRefetch
	j.mu.Unlock()
	if cooling {
		return errCoolingDown
	}
	seq := j.fetchSeq.Add(1)
	ks, err := j.fetch(j.life)
	j.fetches.Add(1)
	j.mu.Lock()
	j.lastKidFetchEnd = j.now()
	j.mu.Unlock()
	if err != nil {
		if j.life.Err() == nil {
			j.logFailure(j.life, "unknown kid", err)
		}
		return err
	}
	j.install(seq, ks)
	return nil
}

// logFailure logs a failed refresh of a URL key set. err comes from
// fetchKeySet: it names the redacted URL and never holds key material.
func (j *JWKS) logFailure(ctx context.Context, trigger string, err error) {
	j.failures.Add(1)
	j.log.LogAttrs(ctx, slog.LevelWarn, "JWKS refresh failed; keeping the keys held",
		slog.String("url", j.url), slog.String("trigger", trigger), slog.String("error", err.Error()))
}

// RefreshFailures returns how many refreshes of a URL key set (background,
// or triggered by an unknown kid) have failed since it was created; 0 for
// a file set. Each failure kept the keys held.
func (j *JWKS) RefreshFailures() int64 { return j.failures.Load() }
