// Package eligibility decides whether a patient's insurance covers a procedure,
// at what percentage, and whether prior authorization is needed.
//
// The procedure catalogue is embedded data (data/catalogue.json): the five
// procedure classes of the service specification (PROC001 MRI scan … PROC005
// General surgery), each with its base coverage and pre-authorization flag, and
// real CPT and HCPCS codes mapped onto those classes. A caller may ask for a
// class code ("PROC001") or for any catalogued code ("70551"); the decision is
// taken on the class, with the plan's exclusions and overrides applied to both
// the requested code and its class.
//
// [Agent.Check] applies these rules, in this order (the zero-knowledge
// eligibility circuit mirrors them, so they are part of the contract):
//
//  1. an unknown code is an error wrapping [ErrUnknownProcedure];
//  2. a record with no coverage block is ineligible (NoCoverage);
//  3. a coverage status other than "active" is ineligible (NoCoverage);
//  4. a service date outside the inclusive coverage window, compared as
//     calendar dates in UTC, is ineligible (NoCoverage);
//  5. a plan that excludes the requested code or its class code
//     (case-insensitively) makes the procedure ineligible;
//  6. otherwise the procedure is eligible, and its coverage percentage is the
//     plan's override for the requested code, else its override for the class
//     code, else the class's base coverage.
//
// CoveragePct is 0 whenever the decision is ineligible; RequiresAuthorization is
// the class's pre-authorization flag in every case. Reasons never contain
// medical data beyond the procedure code and the service date.
//
// The package does no I/O after [New] and has no global state: several agents,
// each with its own catalogue, can live in one process.
package eligibility
