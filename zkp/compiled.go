package zkp

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"sync"

	csbn254 "github.com/consensys/gnark/constraint/bn254"
)

// ccsFormat versions the stored compiled circuits.
const ccsFormat = "healthagents/zkp-ccs/v1"

// compiledFrom compiles the named circuit, or reads it from store. A
// compiled circuit is a function of the binary alone, so an entry is
// named by the circuit and the running executable's Go build ID (which
// changes with any change to its code): another build of the program
// misses and compiles. Without a store, or where the executable has no
// build ID this package can read (an ELF note, on Linux), it compiles.
// An entry that does not decode is compiled again and replaced; one that
// decodes to another circuit has another digest, so keys made for this
// circuit refuse it, loudly, as they would a changed circuit.
func compiledFrom(store TableStore, name string) (*csbn254.R1CS, error) {
	id, ok := executableBuildID()
	if store == nil || !ok {
		return CompileCircuit(name)
	}
	key := hashKey(ccsFormat, name, id)
	var built *csbn254.R1CS
	encode := func(ccs *csbn254.R1CS) ([]byte, error) {
		var buf bytes.Buffer
		if _, err := ccs.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("zkp: encode %s constraint system: %w", name, err)
		}
		return buf.Bytes(), nil
	}
	data, err := store.Get(key, func() ([]byte, error) {
		ccs, err := CompileCircuit(name)
		if err != nil {
			return nil, err
		}
		built = ccs
		return encode(ccs)
	})
	switch {
	case built != nil:
		return built, nil
	case err == nil:
		if ccs, ok := decodeCCS(data); ok {
			return ccs, nil
		}
	}
	ccs, err := CompileCircuit(name)
	if err != nil {
		return nil, err
	}
	if b, err := encode(ccs); err == nil {
		_ = store.Store(key, b) // a store that fails costs the next process a compile
	}
	return ccs, nil
}

// decodeCCS reads a stored constraint system; false for bytes that are
// not one (gnark's decoder may panic on them).
func decodeCCS(data []byte) (ccs *csbn254.R1CS, ok bool) {
	defer func() {
		if recover() != nil {
			ccs, ok = nil, false
		}
	}()
	ccs = new(csbn254.R1CS)
	n, err := ccs.ReadFrom(bytes.NewReader(data))
	if err != nil || n != int64(len(data)) || len(commitmentsOf(ccs)) != 0 {
		return nil, false
	}
	return ccs, true
}

// executableBuildID is the Go build ID of the running executable, read
// from its ELF note (.note.go.buildid), once.
var executableBuildID = sync.OnceValues(func() (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	f, err := elf.Open(exe)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return "", false
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return "", false
	}
	// namesz, descsz, type, then the name ("Go\\0\\0") and the description
	// (the build ID), each padded to four bytes.
	namesz, descsz := uint64(f.ByteOrder.Uint32(data[0:4])), uint64(f.ByteOrder.Uint32(data[4:8]))
	off := 12 + (namesz+3)&^3
	if descsz == 0 || off+descsz > uint64(len(data)) {
		return "", false
	}
	return string(data[off : off+descsz]), true
})
