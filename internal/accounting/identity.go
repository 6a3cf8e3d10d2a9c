package accounting

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/projector"
)

// streamKey holds the identity of the audit stream the index was built
// from: its creation time (8 bytes, big endian Unix nanoseconds; 0 when
// not known, the stream being read through a mirror) and its name. As the
// read model of persons does (projector/identity.go, decisions 0012 and
// 0021), the index belongs to one incarnation of one stream: its position
// is a sequence of that stream, and means nothing in another.
var streamKey = []byte("stream")

// encodeStream returns the value of streamKey for id.
func encodeStream(id projector.StreamIdentity) []byte {
	v := make([]byte, 8, 8+len(id.Name))
	if !id.Created.IsZero() {
		binary.BigEndian.PutUint64(v, uint64(id.Created.UnixNano())) //nolint:gosec // G115: a stream is created after 1970
	}
	return append(v, id.Name...)
}

// decodeStream returns the identity of a value of streamKey.
func decodeStream(v []byte) (projector.StreamIdentity, error) {
	if len(v) < 8 || binary.BigEndian.Uint64(v) > math.MaxInt64 {
		return projector.StreamIdentity{}, fmt.Errorf("accounting index: corrupt stream identity %x", v)
	}
	id := projector.StreamIdentity{Name: string(v[8:])}
	if n := binary.BigEndian.Uint64(v); n != 0 {
		id.Created = time.Unix(0, int64(n)).UTC() //nolint:gosec // G115: n <= MaxInt64, checked above
	}
	return id, nil
}

// describe says which stream id is, for a log line.
func describe(id projector.StreamIdentity) string {
	if id.Created.IsZero() {
		return fmt.Sprintf("%q (creation time unknown)", id.Name)
	}
	return fmt.Sprintf("%q created %s", id.Name, id.Created.UTC().Format(time.RFC3339Nano))
}

// otherStream returns why an index recorded as built from rec is not of
// the stream found ("" when it is): another name, or another creation
// time (the stream deleted and created again) when both are known.
func otherStream(rec, found projector.StreamIdentity) string {
	switch {
	case rec.Name != found.Name:
		return "it followed another stream"
	case !rec.Created.IsZero() && !found.Created.IsZero() && !rec.Created.Equal(found.Created):
		return "the stream was deleted and created again"
	}
	return ""
}

// bindStream holds the index to the stream found, whose last sequence is
// last, before it is followed: a new index records the stream's identity;
// one built from another stream, or from another incarnation of this one,
// is emptied (its position back to 0), logged, and records the stream's,
// to be rebuilt from it. An index of an older build, which recorded none,
// takes the stream's when its position is within the stream, and is
// emptied otherwise; one recorded through a mirror learns the creation
// time once it reads the stream itself.
func (x *Index) bindStream(found projector.StreamIdentity, last uint64) error {
	v, err := x.get(streamKey)
	if err != nil {
		return err
	}
	pos, err := x.Position()
	if err != nil {
		return err
	}
	why := ""
	switch {
	case v == nil && pos > last:
		why = fmt.Sprintf("it recorded no stream, and its position %d is beyond the stream's last sequence %d", pos, last)
	case v != nil:
		rec, err := decodeStream(v)
		if err != nil {
			return err
		}
		if why = otherStream(rec, found); why != "" {
			why += ": it was built from " + describe(rec)
		} else if !rec.Created.IsZero() || found.Created.IsZero() {
			return nil // as recorded (or only its creation time learnt now)
		}
	}
	if why != "" {
		x.log.Warn("accounting index of another audit stream: emptied, to be rebuilt from the stream",
			"audit_stream", describe(found), "why", why, "applied_sequence", pos)
		// Records first, then the position and the identity in one
		// transaction: a crash in between finds the old identity again,
		// and empties the index again.
		if err := x.db.DropPrefix(recordPrefix, clientPrefix, subjectPrefix); err != nil {
			return fmt.Errorf("empty accounting index: %w", err)
		}
	}
	return x.db.Update(func(txn *badger.Txn) error {
		if why != "" {
			if err := txn.Delete(positionKey); err != nil {
				return err
			}
		}
		return txn.Set(streamKey, encodeStream(found))
	})
}
