package access

import (
	"hash/crc32"
	"strings"
	"testing"
)

// The checksum is what a secret scanner computes offline to tell a leaked token from a
// look-alike: the CRC-32 (IEEE) of the 43 characters after cmp_, as 6 base62 digits
// (0-9A-Za-z), most significant first. Computed here independently of encode62; any one
// character changed fails it, and the server refuses such a token before any lookup.
func TestSecretChecksum(t *testing.T) {
	for range 20 {
		s, err := newSecret()
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != SecretLen || !strings.HasPrefix(s, "cmp_") || !wellFormed(s) {
			t.Fatalf("a new secret %q: length %d, well formed %v", s, len(s), wellFormed(s))
		}
		body, check := s[4:4+randomChars], s[4+randomChars:]
		want := make([]byte, checkChars)
		for n, i := uint64(crc32.ChecksumIEEE([]byte(body))), checkChars-1; i >= 0; i-- {
			want[i] = base62[n%62]
			n /= 62
		}
		if check != string(want) {
			t.Errorf("%q: checksum %q, want the CRC-32 of its body in base62, %q", s, check, want)
		}
		for i := 4; i < len(s); i++ {
			c := byte('a')
			if s[i] == c {
				c = 'b'
			}
			if bad := s[:i] + string(c) + s[i+1:]; wellFormed(bad) {
				t.Errorf("%q, with character %d changed, passes the checksum", bad, i)
			}
		}
	}
}
