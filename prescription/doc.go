// Package prescription validates a drug for a patient: drug-drug interactions
// with the patient's current medications, and contraindications from the
// patient's allergies and conditions.
//
// # Reference data
//
// Everything the agent knows is embedded data (data/*.json), validated at
// [New]:
//
//   - drugs.json: commonly prescribed drugs keyed by ingredient-level RxNorm
//     RxCUI, with a therapeutic class, pharmacological groups (such as
//     "strong_cyp3a4_inhibitor" or "qt_prolonging"), brand and international
//     aliases, example NDCs where known, and an illustrative formulary tier.
//   - interactions.json: rules between two selectors, each a set of RxCUIs
//     and/or groups (a drug's class counts as a group), with severity,
//     mechanism, management and source. They cover the fifteen high-priority
//     interaction classes of the ONC panel (Phansalkar et al., JAMIA 2012), warfarin
//     with NSAIDs and aspirin, and other common, well-documented pairs.
//   - contraindications.json: allergy rules (allergen names, matched without
//     regard to case, spacing or a trailing "allergy") and condition rules
//     (ICD-10-CM code prefixes, matched with or without the dot).
//
// The texts are our own summaries for decision support, not a substitute for a
// compendium; docs/decisions/prescription.md says where they come from.
//
// # Decisions
//
// [Agent.Validate] returns a [Decision]. It is invalid when any interaction
// or contraindication is major or contraindicated; moderate and minor ones are
// reported and do not invalidate. When several rules cover the same pair of
// drugs, the most severe is reported. [Agent.Check] does the same for several
// new drugs at once, including interactions among them.
//
// A Decision's Reason names drugs only. Its other fields describe the
// patient's medications, allergies and conditions: they are medical data and
// must not be logged.
//
// A current medication or allergy the agent cannot identify is listed in
// the decision's Unidentified and makes it not valid: unknown never means
// safe.
//
// # Codes
//
// Drugs are looked up by RxCUI (an ingredient's, or a product's the data
// lists), by NDC in any of the usual forms (see [NormalizeNDC]), or by name:
// generic or brand, an RxNorm drug name of any term type (SCD, SBD, GPCK,
// BPCK, SCDC, PIN, MIN) with salts and esters read to the base ingredient,
// or free text ("Coumadin 5 mg tablet"); see [Agent.Lookup] and
// [Agent.Identify].
package prescription
