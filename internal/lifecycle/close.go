package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Closer is a last step of a shutdown (Config.After): Close is given a
// context that ends after Limit (none when 0), and its error is logged
// as Name; the shutdown goes on whatever it answers.
type Closer struct {
	Name  string
	Close func(ctx context.Context) error
	Limit time.Duration
}

func (c Closer) run(logger *slog.Logger) {
	if c.Limit <= 0 {
		if err := c.Close(context.Background()); err != nil {
			logger.Error(c.Name, "err", err)
		}
		return
	}
	Flush(c.Close, c.Limit, c.Name, logger)
}

// Flush calls flush, the Close of what still holds work in flight once
// Run has returned (the audit ledger's records), with a context that ends
// after limit, and logs its error as msg: a shutdown goes on whatever it
// answers.
func Flush(flush func(context.Context) error, limit time.Duration, msg string, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := flush(ctx); err != nil {
		logger.Error(msg, "err", err)
	}
}

// StoreCloser is a store a command opened (a read model, an index), for
// CloseStore: Closed is logged with Dir once Close succeeded, a failure
// of Close is returned prefixed with Failed.
type StoreCloser struct {
	Close          func() error
	Dir            string
	Closed, Failed string
}

// CloseStore closes s, the last step of a shutdown before the log is
// written out, and logs that it did.
func CloseStore(s StoreCloser, logger *slog.Logger) error {
	if err := s.Close(); err != nil {
		return fmt.Errorf("%s: %w", s.Failed, err)
	}
	logger.Info(s.Closed, "dir", s.Dir)
	return nil
}
