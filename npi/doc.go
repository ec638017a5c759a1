// Package npi checks National Provider Identifiers (NPI), the 10-digit
// identifiers that CMS issues to US health care providers.
//
// The tenth digit of an NPI is a Luhn check digit computed over the nine
// identifier digits prefixed with the card issuer code "80840" that the
// standard assigns to US health applications (45 CFR 162.406; CMS, "Requirements
// for NPI check digit"). [Check] verifies it; [CheckDigit] computes it.
// A passing check digit says the number is well formed, not that it is
// issued: the NPPES registry is the authority on that.
package npi
