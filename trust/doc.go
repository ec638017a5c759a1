// Package trust decides which payer credential a decision is proven with:
// the COVERAGE_TRUST policy. Under "self" (the default) the service signs
// coverage that arrives without a credential with its own issuer key, so
// the first request works on any record, and says "issuer": "self"; under
// "registered" only credentials from issuers registered on chain are
// accepted. Either way a record's own credential is checked first: its
// signature, expiry, subject, and on chain its issuer and revocation nonce.
//
// Policy.Credential is what the proof path calls with a parsed record; its
// refusals are sentinel errors that Detail words for the caller.
package trust
