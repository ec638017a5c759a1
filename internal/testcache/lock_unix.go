//go:build unix

package testcache

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes the cache-wide advisory lock called name (flock(2) on
// name.lock in the cache directory), waiting for another process that
// holds it: one builds an entry while the others wait for it.
func (c *Cache) Lock(name string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(c.dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("testcache: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("testcache: lock %s: %w", name, err)
	}
	return func() { _ = f.Close() }, nil // closing the file releases the lock
}
