// Package pharmacy is the pharmacy availability oracle: attestations that a
// pharmacy (by NPI) expects to dispense a drug package (by 11-digit NDC) from
// a date on, written to and read from the PharmacyOracle contract on an
// Ethereum chain.
//
// [Oracle] implements healthagents.PharmacyOracle. It talks to the chain
// through [Backend], the part of a JSON-RPC client it uses (an
// *ethclient.Client, or the simulated backend's client), signs with one key
// (Deploy, New: through a chain.Transactor, the module's one transaction
// pipeline) or writes through a [Sender] that shares another component's
// account and nonces, such as *chain.Ledger (DeployWith, NewWith), and waits
// for each attestation to be mined. An unattested pair reads as not
// found: the oracle never makes up a confirmation.
//
// The contract is compiled with the solc-js pinned in contracts/ (paris EVM)
// by `go generate ./pharmacy/...`.
package pharmacy

//go:generate sh ../contracts/generate-pharmacy.sh
