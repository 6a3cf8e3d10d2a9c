package accounting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Codes returns the client ids and the purpose codes of every record in
// the index, each once, sorted ("" among them when a record has none).
// The index is keyed by person, client and subject, not by purpose, so
// this reads every record: lookupd audit serve calls it once, at start, after catching up,
// when LOOKUP_REGISTRIES_STRICT is set. It stops with ctx's error when
// ctx is done (a shutdown in the middle of the scan).
func (x *Index) Codes(ctx context.Context) (clients, purposes []string, err error) {
	cs, ps := map[string]struct{}{}, map[string]struct{}{}
	err = x.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = recordPrefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := x.record(it.Item())
			if err != nil {
				return err
			}
			cs[r.Client], ps[r.Purpose] = struct{}{}, struct{}{}
		}
		return nil
	})
	return sortedKeys(cs), sortedKeys(ps), err
}

// Oldest returns the time of person's oldest record in the index (false
// when it has none): a seek, not a scan.
func (x *Index) Oldest(person string) (t time.Time, ok bool, err error) {
	prefix := append(append(append([]byte{}, recordPrefix...), person...), 0)
	err = x.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = prefix, false
		it := txn.NewIterator(opts)
		defer it.Close()
		it.Seek(prefix)
		if !it.ValidForPrefix(prefix) {
			return nil
		}
		_, at, _, _, valid := parseRecordKey(it.Item().Key())
		if valid {
			t, ok = time.Unix(0, int64(at)).UTC(), true //nolint:gosec // G115: a key's time is a non-negative int64
		}
		return nil
	})
	return t, ok, err
}

// CheckRegistriesOnce returns the background task of
// LOOKUP_REGISTRIES_STRICT: once the index has caught up with the ledger,
// it reads the whole index for its codes (Codes) and fails, stopping the
// service, when reg lacks one; else it logs so and waits for ctx.
func CheckRegistriesOnce(f *Follower, x *Index, reg *Registry, logger *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return nil
		case <-f.CaughtUp():
		}
		clients, purposes, err := x.Codes(ctx)
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return nil //nolint:nilerr // a shutdown during the scan: nothing to judge
		}
		if err != nil {
			return fmt.Errorf("registries check: %w", err)
		}
		if err := reg.Check(clients, purposes); err != nil {
			return fmt.Errorf("%w (LOOKUP_REGISTRIES_STRICT): add them to LOOKUP_CLIENTS_FILE or LOOKUP_PURPOSES_FILE", err)
		}
		logger.Info("the registries hold every code of the ledger", "clients", len(clients), "purposes", len(purposes))
		<-ctx.Done()
		return nil
	}
}
