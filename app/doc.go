// Package app wires the real parts of healthagents together from settings:
// the Fernet keyring, the database, the ZK proving keys, the chain, the
// agents and the HTTP handler. cmd/healthagents is a thin shell around it;
// tests and examples use it to run the whole service in-process.
package app
