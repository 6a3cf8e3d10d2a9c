package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// minRSABits is the smallest RSA modulus accepted for verification.
const minRSABits = 2048

// ErrNoUsableKeys is returned (wrapped) when a JWKS holds no key that can
// verify tokens under the accepted algorithms.
var ErrNoUsableKeys = errors.New("jwks: no usable verification key (want RSA >= 2048 bits, EC P-256/P-384 or Ed25519, not marked for encryption)")

// The accepted signature algorithms of RSA keys (docs/security.md, "Token
// verification").
var rsaAlgs = []jwa.SignatureAlgorithm{jwa.RS256(), jwa.RS384(), jwa.RS512(), jwa.PS256()}

// keySet is a parsed key set. It is immutable once installed in a JWKS,
// which gives it its generation.
type keySet struct {
	byKID map[string][]verifyKey
	// noKID are the keys without a kid: candidates for every token.
	noKID []verifyKey
	all   []verifyKey
	// ids holds the identity of every (key, algorithm) pair of the set,
	// so that a cached verification can tell whether its key is still here.
	ids map[keyIdentity]struct{}
	// gen is the generation of the set, unique within its JWKS.
	gen uint64
}

// verifyKey is one public key with the algorithms it may verify.
type verifyKey struct {
	kid   string
	thumb [32]byte // RFC 7638 SHA-256 thumbprint
	algs  []jwa.SignatureAlgorithm
	key   crypto.PublicKey // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// keyIdentity names a key of a set and one algorithm it verifies: what a
// cached verification depends on.
type keyIdentity struct {
	thumb [32]byte
	kid   string
	alg   string
}

func (k verifyKey) allows(alg jwa.SignatureAlgorithm) bool {
	for _, a := range k.algs {
		if a == alg {
			return true
		}
	}
	return false
}

// identity returns the identity of k verifying alg.
func (k verifyKey) identity(alg jwa.SignatureAlgorithm) keyIdentity {
	return keyIdentity{thumb: k.thumb, kid: k.kid, alg: alg.String()}
}

// has reports whether the set still holds the key and algorithm of id.
func (ks *keySet) has(id keyIdentity) bool {
	_, ok := ks.ids[id]
	return ok
}

// forKID returns the keys that may verify a token naming kid: those with
// that kid and those without any kid.
func (ks *keySet) forKID(kid string) (keys []verifyKey, known bool) {
	named, known := ks.byKID[kid]
	if len(ks.noKID) == 0 {
		return named, known
	}
	keys = make([]verifyKey, 0, len(named)+len(ks.noKID))
	return append(append(keys, named...), ks.noKID...), known
}

func filterAlg(keys []verifyKey, alg jwa.SignatureAlgorithm) []verifyKey {
	var out []verifyKey
	for _, k := range keys {
		if k.allows(alg) {
			out = append(out, k)
		}
	}
	return out
}

// parseKeySet parses a JWKS document and keeps its usable verification keys.
func parseKeySet(b []byte) (*keySet, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("invalid JWKS: %w", err)
	}
	ks := &keySet{byKID: map[string][]verifyKey{}, ids: map[keyIdentity]struct{}{}}
	for i := 0; i < set.Len(); i++ {
		k, _ := set.Key(i)
		vk, ok := usableKey(k)
		if !ok {
			continue
		}
		ks.all = append(ks.all, vk)
		if vk.kid != "" {
			ks.byKID[vk.kid] = append(ks.byKID[vk.kid], vk)
		} else {
			ks.noKID = append(ks.noKID, vk)
		}
		for _, alg := range vk.algs {
			ks.ids[vk.identity(alg)] = struct{}{}
		}
	}
	if len(ks.all) == 0 {
		return nil, ErrNoUsableKeys
	}
	return ks, nil
}

// usableKey derives the algorithms k may verify from its type and curve,
// narrowed by its own alg, and reports false if k cannot verify any
// accepted algorithm.
func usableKey(k jwk.Key) (verifyKey, bool) {
	if !mayVerify(k) {
		return verifyKey{}, false
	}
	pub, err := k.PublicKey()
	if err != nil {
		return verifyKey{}, false
	}
	var raw any
	if err := jwk.Export(pub, &raw); err != nil {
		return verifyKey{}, false
	}
	algs := keyAlgs(raw)
	if len(algs) == 0 {
		return verifyKey{}, false
	}
	if a, ok := k.Algorithm(); ok {
		// The key's own alg narrows the algorithms to that one, if allowed.
		var narrowed []jwa.SignatureAlgorithm
		for _, cand := range algs {
			if cand.String() == a.String() {
				narrowed = append(narrowed, cand)
			}
		}
		if len(narrowed) == 0 {
			return verifyKey{}, false
		}
		algs = narrowed
	}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil || len(thumb) != 32 {
		return verifyKey{}, false
	}
	vk := verifyKey{algs: algs, key: raw}
	copy(vk.thumb[:], thumb)
	vk.kid, _ = k.KeyID()
	return vk, true
}

// mayVerify reports whether k's use and key_ops, when present, allow
// signature verification.
func mayVerify(k jwk.Key) bool {
	if use, ok := k.KeyUsage(); ok && use != "sig" {
		return false
	}
	ops, ok := k.KeyOps()
	if !ok {
		return true
	}
	for _, op := range ops {
		if op == jwk.KeyOpVerify {
			return true
		}
	}
	return false
}

// keyAlgs returns the accepted algorithms a raw public key can verify by
// its type (and curve), or nil.
func keyAlgs(raw any) []jwa.SignatureAlgorithm {
	switch key := raw.(type) {
	case *rsa.PublicKey:
		if key.N.BitLen() >= minRSABits {
			return rsaAlgs
		}
	case *ecdsa.PublicKey:
		switch key.Curve.Params().Name {
		case "P-256":
			return []jwa.SignatureAlgorithm{jwa.ES256()}
		case "P-384":
			return []jwa.SignatureAlgorithm{jwa.ES384()}
		}
	case ed25519.PublicKey:
		return []jwa.SignatureAlgorithm{jwa.EdDSA()}
	}
	return nil
}

// sameKey reports whether the public keys a and b are equal.
func sameKey(a crypto.PublicKey, b any) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}
