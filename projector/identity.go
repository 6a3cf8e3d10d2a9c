package projector

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// streamIdentity identifies one incarnation of a stream: a stream deleted
// and created again under the same name has another creation time. The
// store records its origin's (origin.go): for a model projected from a
// mirror, the name of the stream mirrored and, when only the mirror was
// ever seen, no creation time (zero).
type streamIdentity struct {
	name    string
	created time.Time
}

func (id streamIdentity) String() string {
	if id.created.IsZero() {
		return fmt.Sprintf("%q (creation time unknown)", id.name)
	}
	return fmt.Sprintf("%q created %s", id.name, id.created.UTC().Format(time.RFC3339Nano))
}

func (id streamIdentity) equal(o streamIdentity) bool {
	return id.name == o.name && id.created.UnixNano() == o.created.UnixNano()
}

func encodeIdentity(id streamIdentity) []byte {
	v := make([]byte, 8, 8+len(id.name))
	if !id.created.IsZero() { // 0: unknown (a zero time.Time has no UnixNano)
		binary.BigEndian.PutUint64(v, uint64(id.created.UnixNano()))
	}
	return append(v, id.name...)
}

// decodeIdentity decodes a stream identity (encodeIdentity).
func decodeIdentity(v []byte) (streamIdentity, error) {
	if len(v) < 8 {
		return streamIdentity{}, fmt.Errorf("corrupt stream identity: %d bytes", len(v))
	}
	created := binary.BigEndian.Uint64(v)
	if created > math.MaxInt64 {
		return streamIdentity{}, fmt.Errorf("corrupt stream identity: creation time out of range")
	}
	if created == 0 {
		return streamIdentity{name: string(v[8:])}, nil
	}
	return streamIdentity{name: string(v[8:]), created: time.Unix(0, int64(created)).UTC()}, nil
}

// streamIdentity returns the identity of the stream the store's checkpoint
// belongs to, ok false if none is recorded.
func (s *Store) streamIdentity() (id streamIdentity, ok bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		return viewValue(txn, keyStream, func(v []byte) (err error) {
			id, err = decodeIdentity(v)
			ok = err == nil
			return err
		})
	})
	if err != nil {
		return streamIdentity{}, false, fmt.Errorf("read stream identity: %w", err)
	}
	return id, ok, nil
}

// bindStream makes id the stream identity written with every batch, and
// records it now if record is set (a fresh store, at first contact).
func (s *Store) bindStream(id streamIdentity, record bool) error {
	v := encodeIdentity(id)
	if record {
		err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyStream, v) })
		if err != nil {
			return fmt.Errorf("record stream identity: %w", err)
		}
	}
	s.ident = v
	return nil
}
