package testcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// DirEnv overrides the cache directory.
const DirEnv = "HEALTHAGENTS_TEST_CACHE"

// entryFormat starts every entry file; a file that does not is rebuilt.
const entryFormat = "healthagents-testcache/v1"

// Cache is a directory of content-addressed entries.
type Cache struct {
	dir string
}

// Open returns the cache at $HEALTHAGENTS_TEST_CACHE, or at
// os.UserCacheDir()/healthagents-test (os.TempDir() when there is no user
// cache directory, as without $HOME), creating the directory.
func Open() (*Cache, error) {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "healthagents-test")
	}
	return OpenDir(dir)
}

// OpenDir returns the cache in dir, creating it.
func OpenDir(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("testcache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Key hashes parts, each length-prefixed so that no two lists of parts
// share a key, into an entry key (hex SHA-256).
func Key(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".entry") }

// ErrBadEntry is what Load reports for an entry that is there but does not
// hold what its key names: another key, a digest that does not match its
// bytes, a truncated or foreign file.
var ErrBadEntry = errors.New("testcache: bad entry")

// Load returns the bytes stored under key; found is false when there is no
// entry. An entry whose recorded key or digest does not match is an error
// wrapping ErrBadEntry (Get rebuilds it).
func (c *Cache) Load(key string) (data []byte, found bool, err error) {
	raw, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("testcache: %w", err)
	}
	// entryFormat SP key SP sha256(payload) SP len(payload) LF payload
	header, payload, ok := bytes.Cut(raw, []byte("\n"))
	fields := bytes.Fields(header)
	if !ok || len(fields) != 4 || string(fields[0]) != entryFormat {
		return nil, true, fmt.Errorf("%w: %s has no entry header", ErrBadEntry, c.path(key))
	}
	if string(fields[1]) != key {
		return nil, true, fmt.Errorf("%w: %s holds the entry of another key", ErrBadEntry, c.path(key))
	}
	sum := sha256.Sum256(payload)
	if n, err := strconv.Atoi(string(fields[3])); err != nil || n != len(payload) || string(fields[2]) != hex.EncodeToString(sum[:]) {
		return nil, true, fmt.Errorf("%w: %s does not match its digest (truncated or corrupt)", ErrBadEntry, c.path(key))
	}
	return payload, true, nil
}

// Store writes data under key: to a temporary file in the cache directory,
// renamed over the entry, so a reader sees the old entry, the new one or
// none, never part of one.
func (c *Cache) Store(key string, data []byte) (err error) {
	sum := sha256.Sum256(data)
	header := fmt.Sprintf("%s %s %x %d\n", entryFormat, key, sum, len(data))
	f, err := os.CreateTemp(c.dir, key+".tmp-*")
	if err != nil {
		return fmt.Errorf("testcache: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.WriteString(header); err != nil {
		return fmt.Errorf("testcache: %w", err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("testcache: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("testcache: %w", err)
	}
	if err = os.Rename(f.Name(), c.path(key)); err != nil {
		return fmt.Errorf("testcache: %w", err)
	}
	return nil
}

// Get returns the bytes under key, building and storing them when the
// entry is missing or bad. The build holds the cache's lock named key, and
// the entry is read again once the lock is held: of several processes
// missing the same entry at once, one builds and the others read its work.
func (c *Cache) Get(key string, build func() ([]byte, error)) ([]byte, error) {
	if data, found, err := c.Load(key); err == nil && found {
		return data, nil
	}
	unlock, err := c.Lock(key)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if data, found, err := c.Load(key); err == nil && found {
		return data, nil
	}
	data, err := build()
	if err != nil {
		return nil, err
	}
	if err := c.Store(key, data); err != nil {
		return nil, err
	}
	return data, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
