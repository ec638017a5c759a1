// Package dp provides the differential-privacy parts of federated training:
// the Gaussian mechanism and a Rényi-DP accountant.
//
// Each round releases the sum of the participants' updates, each clipped to
// L2 norm C, plus Gaussian noise of standard deviation z*C, where z is the
// noise multiplier. Under add/remove-one-participant adjacency the release
// has sensitivity C, so its RDP of order a is a/(2 z^2); rounds compose by
// adding RDP, and [ToEpsilon] converts to (epsilon, delta). [CalibrateNoise]
// finds the smallest z for which a planned number of rounds fits the budget;
// [Ledger] keeps what was spent, is persisted by the coordinator, and its
// [Ledger.Check] (privacy_check) refuses a round that would exceed it.
package dp
