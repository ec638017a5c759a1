// Package x12 renders an eligibility answer as an ASC X12 005010X279A1 271
// (Health Care Eligibility Benefit Response), the transaction a
// clearinghouse expects, and splits an X12 interchange into segments.
// docs/x12.md holds the mapping table. The package is a domain package: no
// net/http, no storage.
package x12
