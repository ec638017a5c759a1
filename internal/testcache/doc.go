// Package testcache keeps what the tests of several packages would each
// build at great cost — today the Groth16 keys of the development circuits —
// in a content-addressed cache shared by every test binary of a `go test`
// run, and by later runs on the same machine.
//
// The cache lives under os.UserCacheDir()/healthagents-test (os.TempDir()
// without a user cache directory), or under $HEALTHAGENTS_TEST_CACHE when
// that is set. An entry is named by a key that
// hashes everything it was built from (for keys: the circuit's name and the
// SHA-256 of its compiled constraint system), so a changed circuit misses
// and is built again while other branches' versions stay. Every entry
// records its key and the SHA-256 of its bytes; an entry that does not
// match either is rebuilt, never trusted. Entries are written to a
// temporary file and renamed, and a build holds a lock, so test binaries
// of different packages running at once (go test runs packages in
// parallel) share one build safely. Deleting the directory is always safe.
//
// It is test infrastructure: no library imports it, and the command opens
// it only when a test harness names it (HEALTHAGENTS_TEST_CACHE, ignored in
// production; cmd/healthagents/harness.go).
package testcache
