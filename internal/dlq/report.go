package dlq

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteList lists the dead letters of t (stream) on w, oldest first:
// one JSON object each (asJSON), or a table (sequence, time, subject,
// origin, reason) followed by their count.
func WriteList(ctx context.Context, t *Tool, stream string, w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		return t.List(ctx, func(l Letter) error { return enc.Encode(l) })
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "SEQ\tTIME\tSUBJECT\tORIGIN\tREASON\n")
	n := 0
	err := t.List(ctx, func(l Letter) error {
		n++
		_, err := fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", l.Seq, l.Time.Format(time.RFC3339), l.Subject, l.Origin(), l.Reason)
		return err
	})
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		fmt.Fprintf(w, "%d dead letter(s) in %s\n", n, stream)
	}
	return err
}

// ReplayReport replays seqs of t (all when empty), writing one line
// per outcome and a summary on w. It fails when a replay failed or an
// event was left in place as still invalid.
func ReplayReport(ctx context.Context, t *Tool, seqs []uint64, opts ReplayOptions, w io.Writer) error {
	counts := map[Result]int{}
	report := func(o Outcome) {
		counts[o.Result]++
		switch o.Result {
		case StillInvalid:
			fmt.Fprintf(w, "%d\tstill invalid, left in the DLQ\t%s\t%s\t%s\n", o.Seq, o.Subject, o.Origin(), o.Problem)
		default:
			fmt.Fprintf(w, "%d\t%s as sequence %d\t%s\t%s\n", o.Seq, o.Result, o.NewSeq, o.Subject, o.Origin())
		}
	}
	var err error
	if len(seqs) == 0 {
		err = t.ReplayAll(ctx, opts, report)
	}
	for _, seq := range seqs {
		var o Outcome
		if o, err = t.Replay(ctx, seq, opts); err != nil {
			break
		}
		report(o)
	}
	fmt.Fprintf(w, "replayed %d, already replayed %d, still invalid %d\n",
		counts[Replayed], counts[AlreadyReplayed], counts[StillInvalid])
	if err == nil && counts[StillInvalid] > 0 {
		err = fmt.Errorf("%d dead letter(s) still invalid, left in the DLQ (--force republishes them anyway)", counts[StillInvalid])
	}
	return err
}
