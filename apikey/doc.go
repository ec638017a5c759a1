// Package apikey is the API key lifecycle: minting, authenticating,
// rotating, revoking and allow-listing keys, and recording their usage.
//
// A key string reads
//
//	sk_live_<id>_<secret><checksum>     (or sk_dev_…)
//
// where id is a 10-character public key id (base62), secret 32 base62
// characters from crypto/rand (≈190 bits) and checksum the CRC-32 of the
// preceding characters in 6 base62 digits, so [Parse] rejects a mistyped or
// invented key without the database, and a secret scanner can recognise
// real keys with a regular expression plus a checksum test:
//
//	sk_(live|dev)_[0-9A-Za-z]{10}_[0-9A-Za-z]{38}
//
// The key is shown once. The store keeps its SHA-256, its id and its
// description ([Key]: tier, scopes, organization, allow-list, limits,
// expiry, revocation). [Service.Authenticate] looks the id up (from a short
// in-memory cache on the hot path), compares hashes in constant time and
// checks expiry, revocation, allow-list and restriction, returning
// [ErrInvalid] (401) or [ErrForbidden] (403).
//
// Persistence is declared here ([Store]) and implemented by package store
// for SQLite and PostgreSQL. Usage is aggregated in memory into per-minute
// latency histograms and written in batches, so recording a request never
// costs a database write on the request path.
//
// The first key is created with the ADMIN_TOKEN, or with a one-time
// bootstrap token ([Service.IssueBootstrapToken]) that the binary prints at
// first start.
package apikey
