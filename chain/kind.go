package chain

import (
	"bytes"
	"fmt"
)

// Kind names a statement kind, e.g. "eligibility". On chain it is the
// bytes32 holding the name's bytes, left-aligned and zero-padded, so a kind
// is at most 32 bytes long and contains no NUL byte.
type Kind string

// bytes32 encodes k for the registry.
func (k Kind) bytes32() ([32]byte, error) {
	var b [32]byte
	if k == "" || len(k) > 32 || bytes.IndexByte([]byte(k), 0) >= 0 {
		return b, fmt.Errorf("chain: invalid statement kind %q: want 1..32 bytes without NUL", string(k))
	}
	copy(b[:], k)
	return b, nil
}

// kindFromBytes32 decodes a kind written by bytes32.
func kindFromBytes32(b [32]byte) Kind {
	return Kind(bytes.TrimRight(b[:], "\x00"))
}
