package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"strings"
	"sync"
)

// macKey computes HMAC-SHA256 with one account key. Building an HMAC
// derives the padded inner and outer keys; a pool of ready hashes keeps that
// work out of the per-request path (Reset restores the keyed state without
// re-deriving it).
type macKey struct {
	pool sync.Pool
}

func newMACKey(key []byte) *macKey {
	k := append([]byte(nil), key...)
	m := &macKey{}
	m.pool.New = func() any { return hmac.New(sha256.New, k) }
	return m
}

// sum writes HMAC-SHA256(key, msg) into out.
func (m *macKey) sum(msg []byte, out *[sha256.Size]byte) {
	h := m.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(msg)
	h.Sum(out[:0])
	m.pool.Put(h)
}

// sign returns the base64 signature of msg, as the SDKs encode it.
func (m *macKey) sign(msg string) string {
	var out [sha256.Size]byte
	m.sum([]byte(msg), &out)
	return base64.StdEncoding.EncodeToString(out[:])
}

// signatureLen is the length of a base64 (standard, padded) HMAC-SHA256.
const signatureLen = 44

// decodeSignature decodes a base64 signature as the SDKs send it. A SAS sig
// that a hand-built client left with a raw '+' arrives as a space after
// query decoding; base64 has no spaces, so turning them back is safe.
func decodeSignature(s string) (sig [sha256.Size]byte, ok bool) {
	if len(s) != signatureLen {
		return sig, false
	}
	if strings.IndexByte(s, ' ') >= 0 {
		s = strings.ReplaceAll(s, " ", "+")
	}
	var buf [sha256.Size + 1]byte
	n, err := base64.StdEncoding.Decode(buf[:], []byte(s))
	if err != nil || n != sha256.Size {
		return sig, false
	}
	copy(sig[:], buf[:n])
	return sig, true
}

// matchAny reports whether sig is the HMAC of msg under any of keys. Each
// comparison is constant-time (hmac.Equal), and every key is tried even
// after a match so timing does not reveal which key signed.
func matchAny(keys []*macKey, msg []byte, sig *[sha256.Size]byte) bool {
	var out [sha256.Size]byte
	matched := false
	for _, k := range keys {
		k.sum(msg, &out)
		if hmac.Equal(out[:], sig[:]) {
			matched = true
		}
	}
	return matched
}
