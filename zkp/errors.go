package zkp

import "errors"

// Sentinel errors. Their texts are the API's error wording (the errors table
// of docs/decisions.md), so a caller can prefix them ("Eligibility check failed: " + err).
var (
	// ErrTimeout: proof generation exceeded its deadline (default 5 s).
	ErrTimeout = errors.New("ZK proof generation timed out")
	// ErrInvalidProof: a proof did not verify against its public inputs.
	ErrInvalidProof = errors.New("ZK proof verification failed")
	// ErrUnsatisfied: a claimed output does not follow from the record by the
	// circuit's rules, so no proof exists; the prover reports this instead
	// of producing one.
	ErrUnsatisfied = errors.New("ZK proof generation failed: claimed outputs do not follow from the record")
	// ErrRecordTooLarge: the record cannot be encoded in the circuit's fixed
	// bounds (MaxExclusions, MaxOverrides, DayBits) or lacks coverage.
	ErrRecordTooLarge = errors.New("record exceeds the bounds of the ZK circuit")
	// ErrKeyMismatch: stored or ceremony keys do not belong to the compiled
	// circuit.
	ErrKeyMismatch = errors.New("ZK keys do not match the compiled circuit")
	// ErrUnknownCircuit: a proof names a circuit this system does not have.
	ErrUnknownCircuit = errors.New("unknown ZK circuit")
)
