package testcache

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// KeySet describes key files built together by one set-up, such as the
// Groth16 keys of zkp's circuits (package zkkeys fills it in): an entry per
// circuit, keyed by the circuit's name and digest.
type KeySet struct {
	// Format versions the entries: a new format misses every old entry.
	Format string
	// Names lists the circuits.
	Names []string
	// Digest is the content hash of a circuit as this binary compiles it.
	Digest func(name string) (string, error)
	// Files names a circuit's files in the layout Build reads and writes.
	Files func(name string) []string
	// Build loads the files under dir, checking them, and builds the
	// files of the circuits dir lacks, writing them there. An error on
	// files from the cache makes KeyFiles build every circuit afresh.
	Build func(ctx context.Context, dir string) error
}

// KeyFiles returns the files of every circuit of ks (file name → bytes),
// from c where it holds them; the circuits it misses are built by one
// ks.Build, run under c's lock named ks.Format, and stored. Whatever c
// held is checked by ks.Build before it is returned: files that fail it
// (a bad pair behind a good digest) are dropped and built again, never
// handed out.
func (c *Cache) KeyFiles(ctx context.Context, ks KeySet) (map[string][]byte, error) {
	files, missing, err := c.loadKeyEntries(ks)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		unlock, err := c.Lock(Key([]byte(ks.Format)))
		if err != nil {
			return nil, err
		}
		defer unlock()
		// Another process may have built them while this one waited.
		if files, missing, err = c.loadKeyEntries(ks); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "healthagents-testcache-")
	if err != nil {
		return nil, fmt.Errorf("testcache: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := WriteFiles(dir, files); err != nil {
		return nil, err
	}
	if err := ks.Build(ctx, dir); err != nil {
		if len(files) == 0 {
			return nil, err
		}
		// Cached files that do not load: build every circuit afresh.
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("testcache: %w", err)
		}
		if err := ks.Build(ctx, dir); err != nil {
			return nil, err
		}
		missing = ks.Names
	}
	out := map[string][]byte{}
	for _, name := range ks.Names {
		set := map[string][]byte{}
		for _, f := range ks.Files(name) {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, fmt.Errorf("testcache: %w", err)
			}
			set[f], out[f] = b, b
		}
		if !slices.Contains(missing, name) {
			continue
		}
		key, err := ks.Key(name)
		if err != nil {
			return nil, err
		}
		if err := c.Store(key, Pack(set)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Key is the entry key of a circuit's files: the format, the circuit's
// name and its digest.
func (ks KeySet) Key(name string) (string, error) {
	digest, err := ks.Digest(name)
	if err != nil {
		return "", err
	}
	return Key([]byte(ks.Format), []byte(name), []byte(digest)), nil
}

// loadKeyEntries reads the entry of every circuit: the files of those
// found, the names of those missing or bad.
func (c *Cache) loadKeyEntries(ks KeySet) (files map[string][]byte, missing []string, err error) {
	files = map[string][]byte{}
	for _, name := range ks.Names {
		key, err := ks.Key(name)
		if err != nil {
			return nil, nil, err
		}
		data, found, err := c.Load(key)
		var set map[string][]byte
		if err == nil && found {
			set, err = Unpack(data, ks.Files(name))
		}
		if err != nil || !found {
			missing = append(missing, name)
			continue
		}
		for f, b := range set {
			files[f] = b
		}
	}
	return files, missing, nil
}

// Pack concatenates files in a stable order, each as name length, name,
// data length, data.
func Pack(files map[string][]byte) []byte {
	var out []byte
	for _, name := range sortedKeys(files) {
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		out = binary.AppendUvarint(out, uint64(len(files[name])))
		out = append(out, files[name]...)
	}
	return out
}

// Unpack reverses Pack; the entry must hold exactly the files want.
func Unpack(data []byte, want []string) (map[string][]byte, error) {
	files := map[string][]byte{}
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(data)
		if k <= 0 || uint64(len(data)-k) < n {
			return nil, fmt.Errorf("%w: truncated file list", ErrBadEntry)
		}
		b := data[k : k+int(n)]
		data = data[k+int(n):]
		return b, nil
	}
	for len(data) > 0 {
		name, err := next()
		if err != nil {
			return nil, err
		}
		b, err := next()
		if err != nil {
			return nil, err
		}
		files[string(name)] = b
	}
	if len(files) != len(want) {
		return nil, fmt.Errorf("%w: %d files, want %d", ErrBadEntry, len(files), len(want))
	}
	for _, w := range want {
		if _, ok := files[w]; !ok {
			return nil, fmt.Errorf("%w: no %s", ErrBadEntry, w)
		}
	}
	return files, nil
}

// WriteFiles writes files (name → bytes) into dir, creating it.
func WriteFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("testcache: %w", err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("testcache: %w", err)
		}
	}
	return nil
}

// ZKPKeys is the KeySet of zkp's Groth16 keys, given zkp's functions
// (testcache cannot import zkp, whose own tests use it; package zkkeys
// passes them for everyone else): an entry per circuit, keyed by the
// SHA-256 of its compiled constraint system (zkp.CircuitDigest), holding
// the layout zkp.LoadOrSetup reads and writes (NAME.pk, NAME.vk,
// NAME.json); loadOrSetup checks cached pairs (manifest against the
// compiled circuit, files against their digests, a sample proof) and sets
// up the missing ones.
func ZKPKeys(names []string, digest func(string) (string, error), loadOrSetup func(ctx context.Context, dir string) error) KeySet {
	return KeySet{
		Format: "zkp-keys/v1",
		Names:  names,
		Digest: digest,
		Files:  func(name string) []string { return []string{name + ".pk", name + ".vk", name + ".json"} },
		Build:  loadOrSetup,
	}
}
