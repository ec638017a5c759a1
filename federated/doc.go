// Package federated trains a shared diagnosis model across hospitals without
// any hospital's records or individual model update leaving its premises in
// the clear.
//
// A [Task] (configuration, with [DefaultTask] built in) names the features
// read from each record's observations, how they are standardized, the label
// values of record.Diagnosis, and the model: L2-regularised
// [LogisticRegression] behind the small [Model] interface. Weights have a
// canonical encoding ([EncodeWeights]) and a [ModelHash]; every accepted
// version is appended to the model history as a [ModelVersion].
//
// Each round (0-indexed) runs secure aggregation (package secagg) in four
// phases — advertise keys, share keys, masked input, unmasking — driven by a
// [Coordinator] and, at each hospital, a [Participant]. The participant
// trains locally ([Train]), clips its update to the configured L2 norm, runs
// nan_check ([NaNCheck]) and bounds_check ([BoundsCheck]), quantizes it,
// appends its held-out evaluation counters and masks the vector. The
// coordinator's API ([Submission]) has no field for a plaintext update: it
// only ever holds masked vectors and shares, and unmasks the sum over at
// least three survivors. With differential privacy on (the default, epsilon
// 0.1 and delta 1e-5 for the whole run), it adds Gaussian noise to that sum
// and charges the release to a Rényi-DP ledger (package dp); privacy_check
// refuses to open a round the budget cannot pay for.
//
// Every state change goes through the [Store] interface before it is
// acknowledged, so a coordinator restarted over the same store resumes the
// round in the phase it was in. Time comes from an injected clock; phases end
// early when every expected participant has answered and otherwise at their
// deadline, with enough survivors or by abandoning the round (the model is
// then unchanged).
//
// Per-participant bounds need proofs: with [ProofConfig] every round masks in
// a field (package normproof) and each masked input comes with a Groth16
// proof that it hides an update within the clip norm and evaluation counts
// within the participant's registered cohort ([CohortSizes]); the coordinator
// verifies it before the input joins the sum. Without proofs only the sum is
// checked.
//
// A task's features are standardized with a given mean and scale, or, for a
// learned feature, with the pooled mean and scale that a statistics round
// ([RoundStatistics]) learns before training: a secure sum of each
// participant's count, sum and sum of squares of the feature's values
// clipped to a declared range, released as the [ModelVersion.Scaling] that
// every later version carries.
//
// A [TaskFile] (JSON) describes a task for operators, with CSV reading
// ([TaskFile.ReadCSV]); [SettingsFromEnv] reads the FEDERATED_* run settings;
// [Tasks] runs several tasks side by side, each with its own budget
// ([Coordinator.Privacy]).
//
// See docs/decisions/federated.md for the choices made where the service
// specification is silent, and docs/federated-privacy.md for what the privacy
// guarantee covers.
package federated
