// Package store is the service's durable storage: one SQL database, either an
// embedded SQLite file (the default, pure Go through modernc.org/sqlite) or
// PostgreSQL (through pgx), opened by [Open] from a DSN.
//
// The schema is versioned. Every file in migrations/ is one migration, named
// NNNN_description.sql (portable SQL, applied on both engines) or
// NNNN_description.sqlite.sql / NNNN_description.postgres.sql (one engine
// only). [Open] applies the pending ones in version order, each recorded in
// the schema_migrations table, all inside one transaction that also holds a
// lock (PostgreSQL: pg_advisory_xact_lock; SQLite: BEGIN IMMEDIATE), so two
// replicas starting at once migrate exactly once. To add tables, append a file
// with the next free number; never edit a migration that has been released.
//
// Packages that need persistence declare the small interface they use; store
// implements it. [KeyStore] implements the key and usage persistence that
// package apikey declares.
//
// Times are stored as BIGINT Unix microseconds (UTC) and IP prefixes as text,
// so the same SQL runs on both engines.
package store
