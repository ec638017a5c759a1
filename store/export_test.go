package store

// RebindDollar exposes the PostgreSQL placeholder rewrite to tests.
var RebindDollar = rebindDollar
