package projector

// Table tags: the first byte of every key (see Key layout in the package
// documentation).
const (
	tagMeta     = 'm'
	tagConsumer = 'c'
	tagContact  = 'b'
	tagSigner   = 's'
	// tagSignerSet: a consumer's signer set, derived from its signer
	// records (see signerset.go).
	tagSignerSet = 'l'
	// tagDeletion: the record of a deletion the projector applied, by its
	// stream sequence (deletions.go).
	tagDeletion = 'x'
)

// keyCheckpoint holds the checkpoint; keyStream the identity of its stream.
var keyCheckpoint = []byte{tagMeta, 'c', 'h', 'e', 'c', 'k', 'p', 'o', 'i', 'n', 't'}

var keyStream = []byte{tagMeta, 's', 't', 'r', 'e', 'a', 'm'}

// keySignerSets holds the sequence of the checkpoint the signer sets were
// last kept at (see ensureSignerSets).
var keySignerSets = []byte("msignersets")

func entityKey(tag byte, id string) []byte {
	k := make([]byte, 0, 1+len(id))
	k = append(k, tag)
	return append(k, id...)
}

func signerPrefix(consumerID string) []byte {
	k := make([]byte, 0, 2+len(consumerID))
	k = append(k, tagSigner)
	k = append(k, consumerID...)
	return append(k, '.')
}

func signerKey(consumerID, signerID string) []byte {
	k := make([]byte, 0, 2+len(consumerID)+len(signerID))
	k = append(k, tagSigner)
	k = append(k, consumerID...)
	k = append(k, '.')
	return append(k, signerID...)
}
