package keyfile

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ReadAES reads an AES key file. The file holds either the hex (32, 48
// or 64 hex digits) or standard base64 encoding of a 16, 24 or 32-byte key as
// text, surrounding white space allowed, or exactly 16, 24 or 32 raw bytes.
// Text is tried first (so a 32-character hex or base64 text is decoded, not
// taken as a raw key). Anything
// else is an error wrapping ErrNoKey; the error never contains the
// file's content.
func ReadAES(path string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	// Text first: a random raw key is hex or base64 text by accident with
	// negligible probability, while hex of a 16-byte key is itself 32 bytes.
	text := bytes.TrimSpace(b)
	if k, err := hex.DecodeString(string(text)); err == nil && validKeyLen(len(k)) {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(string(text)); err == nil && validKeyLen(len(k)) {
		return k, nil
	}
	if validKeyLen(len(b)) {
		return b, nil
	}
	return nil, fmt.Errorf("read key file %s: %w: want 16, 24 or 32 raw bytes, or their hex or base64 text (file holds %d bytes)", path, ErrNoKey, len(b))
}

// ErrNoKey is returned (wrapped, naming the file) by ReadAES when the
// file holds no AES key.
var ErrNoKey = errors.New("encryption key rejected")

func validKeyLen(n int) bool { return n == 16 || n == 24 || n == 32 }
