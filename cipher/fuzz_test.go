package cipher

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

func identityMultihash(b []byte) multihash.Multihash {
	h, err := multihash.Sum(b, multihash.IDENTITY, -1)
	if err != nil {
		panic(err)
	}
	return h
}

// FuzzOpen feeds arbitrary envelopes to Open: it must never panic, and it must
// either return the plaintext whose SHA-256 is data_hash, or an error that
// wraps one of the sentinels and carries no key material.
func FuzzOpen(f *testing.F) {
	k := testRing(f)
	valid := seal(f, k, testRecord)
	raw, err := base64.URLEncoding.DecodeString(valid.EncryptedData)
	if err != nil {
		f.Fatal(err)
	}
	add := func(e Envelope) { f.Add(e.PatientID, e.EncryptedData, e.IPFSCID, e.DataHash) }
	add(valid)
	add(Envelope{})
	add(Envelope{PatientID: "p", EncryptedData: base64.StdEncoding.EncodeToString([]byte(valid.EncryptedData)), IPFSCID: valid.IPFSCID, DataHash: valid.DataHash})
	add(Envelope{PatientID: "p", EncryptedData: valid.EncryptedData, IPFSCID: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", DataHash: valid.DataHash})
	add(Envelope{PatientID: "p", EncryptedData: valid.EncryptedData, IPFSCID: valid.IPFSCID, DataHash: strings.Repeat("0", 64)})
	add(Envelope{PatientID: "p", EncryptedData: base64.RawURLEncoding.EncodeToString(raw[:73]), IPFSCID: valid.IPFSCID, DataHash: valid.DataHash})
	add(Envelope{PatientID: "p", EncryptedData: "%%%", IPFSCID: "bafy", DataHash: "XYZ"})
	add(Envelope{PatientID: "p", EncryptedData: "gAAAAA", IPFSCID: "zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA", DataHash: valid.DataHash})
	// CIDs the service cannot check (ErrCIDUnchecked): another codec, an
	// identity multihash, a truncated digest.
	add(Envelope{PatientID: "p", EncryptedData: valid.EncryptedData, IPFSCID: cid.NewCidV1(cid.DagCBOR, sha256Multihash([]byte(valid.EncryptedData))).String(), DataHash: valid.DataHash})
	add(Envelope{PatientID: "p", EncryptedData: valid.EncryptedData, IPFSCID: cid.NewCidV1(cid.Raw, identityMultihash([]byte("x"))).String(), DataHash: valid.DataHash})
	sentinels := []error{ErrMissingField, ErrInvalidPatientID, ErrInvalidHashFormat, ErrInvalidCID, ErrCIDUnchecked, ErrInvalidEncoding, ErrDecrypt, ErrEnvelopeExpired, ErrCIDMismatch, ErrHashMismatch}
	keyText := testKey(11).Encode()

	f.Fuzz(func(t *testing.T, patientID, encryptedData, ipfsCID, dataHash string) {
		env := Envelope{PatientID: patientID, EncryptedData: encryptedData, IPFSCID: ipfsCID, DataHash: dataHash}
		plain, err := k.Open(t.Context(), env)
		if err == nil {
			sum := sha256.Sum256(plain)
			if hex.EncodeToString(sum[:]) != dataHash {
				t.Fatalf("Open returned plaintext whose hash is not data_hash")
			}
			return
		}
		if plain != nil {
			t.Fatalf("plaintext returned with error %v", err)
		}
		n := 0
		for _, s := range sentinels {
			if errors.Is(err, s) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("error %q wraps %d sentinels, want 1", err, n)
		}
		var fe *FieldError
		var ee *EnvelopeError
		if errors.Is(err, ErrMissingField) != errors.As(err, &fe) || (fe == nil && !errors.As(err, &ee)) {
			t.Fatalf("error %q has the wrong type %T", err, err)
		}
		if strings.Contains(err.Error(), keyText) || (len(encryptedData) >= 16 && strings.Contains(err.Error(), encryptedData)) {
			t.Fatalf("error leaks input: %q", err)
		}
	})
}

// FuzzDecrypt feeds arbitrary token text and TTLs to Keyring.Decrypt: it must
// never panic, and every failure is a *TokenError wrapping ErrInvalidEncoding
// or ErrDecrypt. Seeded with the spec's vectors.
func FuzzDecrypt(f *testing.F) {
	for _, name := range []string{"verify.json", "invalid.json"} {
		for _, v := range loadVectors(f, name) {
			f.Add([]byte(v.Token), int64(v.TTLSec))
		}
	}
	f.Add([]byte(""), int64(0))
	k, err := ParseKeyring("cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4=")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token []byte, ttlSec int64) {
		msg, err := k.Decrypt(token, time.Duration(ttlSec%(1<<32))*time.Second)
		if err == nil {
			return // a token the spec key really opens
		}
		if msg != nil {
			t.Fatal("message returned with an error")
		}
		var te *TokenError
		if !errors.As(err, &te) || errors.Is(err, ErrInvalidEncoding) == errors.Is(err, ErrDecrypt) {
			t.Fatalf("error %q (%T) must be a *TokenError wrapping exactly one of ErrInvalidEncoding, ErrDecrypt", err, err)
		}
	})
}
