package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"math/big"
	"strings"
)

// A token's secret is "cmp_", 43 base62 characters of 32 random bytes (256 bits), then 6
// base62 characters of the CRC-32 of those 43. The prefix lets a secret scanner find a
// leaked one; the checksum lets it (and the server, before any lookup) tell a real token
// from a string that merely looks like one, as GitHub's ghp_ tokens do.
const (
	secretPrefix = "cmp_"
	randomChars  = 43 // 62^43 > 2^256
	checkChars   = 6  // 62^6 > 2^32
	// SecretLen is the length of every token's secret.
	SecretLen = len(secretPrefix) + randomChars + checkChars
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newSecret returns a fresh secret.
func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	body := encode62(new(big.Int).SetBytes(b[:]), randomChars)
	return secretPrefix + body + checksum(body), nil
}

// wellFormed reports whether s has a token's shape and a right checksum.
func wellFormed(s string) bool {
	body, ok := strings.CutPrefix(s, secretPrefix)
	if !ok || len(body) != randomChars+checkChars {
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62, body[i]) < 0 {
			return false
		}
	}
	return checksum(body[:randomChars]) == body[randomChars:]
}

func checksum(body string) string {
	return encode62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(body)))), checkChars)
}

// encode62 writes n in base62, left-padded with zeros to width characters.
func encode62(n *big.Int, width int) string {
	out := make([]byte, width)
	base, mod := big.NewInt(62), new(big.Int)
	n = new(big.Int).Set(n)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

// hashOf is the key the row of a secret (a token, an MCP session's id, a sign-in code, a
// signed-in browser's cookie) is kept under: only this is stored, never the secret.
func hashOf(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

// randomHex returns n random bytes in hex: the secrets that, unlike tokens, no person
// copies by hand (MCP session ids, sign-in codes, cookies), so need no prefix or checksum.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
