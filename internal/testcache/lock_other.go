//go:build !unix

package testcache

// Lock is a no-op without flock(2): processes missing the same entry then
// each build it, and the last rename wins (every build is a valid entry).
func (c *Cache) Lock(string) (func(), error) { return func() {}, nil }
