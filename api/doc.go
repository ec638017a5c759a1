// Package api declares every JSON type of the HTTP API that both the server
// and the client SDK use: one declaration per wire type, one file per
// resource (stripe-go's layout). It imports no gnark, go-ethereum or SQL
// driver, so a program that imports the SDK pulls in none of them
// (TestClientDependencies guards this).
//
// Request types with rules have a Validate method: the server calls it, and
// an SDK user can call it before sending.
package api
