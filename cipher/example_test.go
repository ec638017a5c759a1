package cipher_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/cipher"
)

// The Fernet spec's published test key; never use a known key for real data.
const exampleKey = "cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4="

func ExampleSeal() {
	ring, err := cipher.ParseKeyring(exampleKey)
	if err != nil {
		panic(err)
	}
	record := []byte(`{"schema":"healthagents/record/v1","patient_id":"PT-000123"}`)
	env, err := cipher.Seal("PT-000123", record, ring)
	if err != nil {
		panic(err)
	}
	// The token and CID change with every call (random IV, current time);
	// data_hash depends on the plaintext only.
	fmt.Println(env.PatientID)
	fmt.Println(strings.HasPrefix(env.EncryptedData, "gAAAAA"))
	fmt.Println(strings.HasPrefix(env.IPFSCID, "bafkrei"))
	fmt.Println(env.DataHash == cipher.DataHash(record))
	// Output:
	// PT-000123
	// true
	// true
	// true
}

func ExampleKeyring_Open() {
	// FERNET_KEY with two keys: a new one that encrypts, the old one still
	// accepted for envelopes sealed before the rotation.
	newKey, err := cipher.GenerateKey()
	if err != nil {
		panic(err)
	}
	oldRing, err := cipher.ParseKeyring(exampleKey)
	if err != nil {
		panic(err)
	}
	env, err := cipher.Seal("PT-000123", []byte(`{"patient_id":"PT-000123"}`), oldRing)
	if err != nil {
		panic(err)
	}

	ring, err := cipher.ParseKeyring(newKey + "," + exampleKey)
	if err != nil {
		panic(err)
	}
	fmt.Println(ring)
	plain, err := ring.Open(context.Background(), env)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(plain))

	env.DataHash = cipher.DataHash([]byte("something else"))
	_, err = ring.Open(context.Background(), env)
	fmt.Println(errors.Is(err, cipher.ErrHashMismatch), err)
	// Output:
	// cipher.Keyring(2 keys)
	// {"patient_id":"PT-000123"}
	// true cipher: data_hash: data hash mismatch
}
