package dev

import (
	"bufio"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/lookup/persons/events"
)

// LoadKeyFor loads the key at path for "lookupd token", creating it when
// missing if create; a missing key's error says how to get one.
func LoadKeyFor(path string, create bool) (*rsa.PrivateKey, error) {
	load := LoadKey
	if create {
		load = LoadOrCreateKey
	}
	key, err := load(path)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (start \"lookupd dev\" first, pass the --key path it prints, or pass --create)", err)
	}
	return key, err
}

// MintN mints n tokens for req with k and writes them to w, one a line.
// More than one token gives each a distinct jti claim, so that no two are
// the same.
func MintN(w io.Writer, k *rsa.PrivateKey, req TokenRequest, n int) error {
	bw := bufio.NewWriter(w)
	for range n {
		if n > 1 {
			req.ID = uuid.NewString()
		}
		tok, err := Mint(k, req)
		if err != nil {
			return err
		}
		fmt.Fprintln(bw, tok)
	}
	return bw.Flush()
}

// WriteJWKS writes the JWKS of k's public half into dir (JWKSFile) and
// returns it and the file's path.
func WriteJWKS(k *rsa.PrivateKey, dir string) (jwks []byte, path string, err error) {
	if jwks, err = PublicJWKS(k); err != nil {
		return nil, "", err
	}
	path = filepath.Join(dir, JWKSFile)
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		return nil, "", fmt.Errorf("dev JWKS: %w", err)
	}
	return jwks, path, nil
}

// ParseTenants returns the business ids in list (comma-separated
// canonical UUIDs, blanks around them ignored), lower-cased
// (events.NormalizeID); nil for an empty list. Its error quotes the
// first id that is not one.
func ParseTenants(list string) ([]string, error) {
	var ids []string
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		id, ok := events.NormalizeID(t)
		if !ok {
			return nil, fmt.Errorf("%q: want comma-separated canonical UUIDs", t)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
