// Package x12 speaks ASC X12 005010 eligibility as a clearinghouse does:
// Read270 reads an interchange of 270s (005010X279A1) — the envelope
// (ISA/IEA, GS/GE, ST/SE) with the separators its ISA declares, each
// transaction set's HL hierarchy, its segments' order and counts, and the
// elements the service interprets; RenderAck answers a 270 that fails with
// a TA1 (the interchange) or a 999 (005010X231A1) naming each segment and
// element; Render271s answers a read 270 with its 271s (traces echoed,
// decisions as EB loops, AAA where a question could not be served);
// Render271 renders one JSON eligibility answer as a 271, and ForProblem
// maps an error answer onto one; Split reads an interchange back into
// segments, and Decisions the statement and (for a decision anchored in
// a batch) the proof each decision's MSG segments carry (EncodeStatement,
// EncodeProof). docs/x12.md holds the mappings. The package is a domain
// package: no net/http, no storage. Package core reads and writes the CAQH
// CORE connectivity envelope; package x12test has the tests read X12 with
// two npm parsers.
package x12
