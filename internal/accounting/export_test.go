package accounting

import (
	"github.com/dgraph-io/badger/v4"
)

// What the tests of package accounting_test, which build on
// internal/testing/accountingtest (which imports this package), read of
// the index's insides.

// DB returns x's store.
func DB(x *Index) *badger.DB { return x.db }

// ReadRecord is (*Index).record.
var ReadRecord = (*Index).record

var (
	RecordPrefix   = recordPrefix
	ClientPrefix   = clientPrefix
	SubjectPrefix  = subjectPrefix
	FormatKey      = formatKey
	RecordKey      = recordKey
	ParseRecordKey = parseRecordKey
	AppendValue    = appendValue
	DecodeValue    = decodeValue
	Nanos          = nanos
	Indexable      = indexable
	ErrValue       = errValue
)

const (
	ValueFormat = valueFormat
	MaxApply    = maxApply
)
