package erasure

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Write writes r as JSON (indented) or, by default, as text.
func (r Report) Write(w io.Writer, asJSON bool) error {
	if !asJSON {
		return r.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for a person to read: per entity, whether it was
// deleted, then each place, what remains there and since when it is
// clear.
func (r Report) WriteText(w io.Writer) error {
	if len(r.Entities) == 0 {
		_, err := fmt.Fprintf(w, "%s: nothing known of this id (no event in the stream, no erasure recorded)\n", r.PersonID)
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, e := range r.Entities {
		name := e.Kind + " " + e.ID
		if e.ConsumerID != "" {
			name += " (signer of consumer " + e.ConsumerID + ")"
		}
		if !e.Deleted {
			fmt.Fprintf(tw, "%s: not deleted: nothing to erase\n", name)
			continue
		}
		fmt.Fprintf(tw, "%s: deleted by the event at stream sequence %d (%s)", name, e.DeletionSeq, stamp(e.DeletedAt))
		if e.ErasedWith != "" {
			fmt.Fprintf(tw, ", the deletion of consumer %s", e.ErasedWith)
		}
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "  PLACE\tNAME\tREMAINS\tCLEARED\n")
		for _, p := range e.Places {
			remains := fmt.Sprint(p.Remains)
			if p.Remains < 0 {
				remains = "not yet cleared"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Place, p.Name, remains, stamp(p.At))
		}
		if e.Complete {
			fmt.Fprintf(tw, "  erasure complete: %s\n", stamp(e.CompletedAt))
		} else {
			fmt.Fprintf(tw, "  erasure not complete\n")
		}
	}
	return tw.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
