package app

import "time"

// The tests' proof deadline (see proofTimeout): a busy machine (go test runs
// packages side by side, and other work may keep every core busy) can take
// more than the spec's 5 s for a proof that takes a fraction of a second
// idle. A minute is far above any run measured and still fails a hang.
func init() { proofTimeout = time.Minute }

// AllowDevelopmentParts lets a production Config open on a generated
// Fernet key, the embedded chain and development ZK keys: for tests of
// production's request rules, which need no real network. Test-only.
func AllowDevelopmentParts(c *Config) { c.allowDevelopmentParts = true }
