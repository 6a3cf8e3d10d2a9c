package lifecycle

import (
	"context"
	"errors"
	"log/slog"

	"github.com/lookup/persons/projector"
)

// Runner is what RunProjector runs: a replica.Replica.
type Runner interface {
	Run(ctx context.Context) error
	Progress() projector.Progress
}

// RunProjector runs p until ctx is done. It returns nil when ctx ended it,
// and the projector's error otherwise (which stops the whole process).
func RunProjector(ctx context.Context, p Runner, logger *slog.Logger) error {
	err := p.Run(ctx)
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		logger.Info("projector stopped", append(Cause(ctx), "applied_sequence", p.Progress().AppliedSeq)...)
		return nil
	}
	if err == nil {
		return errors.New("projector stopped unexpectedly")
	}
	return err
}
