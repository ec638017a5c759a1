package app

// AllowDevelopmentParts lets a production Config open on a generated
// Fernet key, the embedded chain and development ZK keys: for tests of
// production's request rules, which need no real network. Test-only.
func AllowDevelopmentParts(c *Config) { c.allowDevelopmentParts = true }
