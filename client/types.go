package client

import (
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/federated"
)

// The SDK's wire types are the api package's (declared once, shared with
// the server); these names keep the SDK's own spelling working.
type (
	CreateKeyRequest      = api.CreateKeyRequest
	KeyCreated            = api.KeyCreated
	KeyInfo               = api.KeyInfo
	KeyList               = api.KeyList
	KeyRevoked            = api.KeyRevoked
	KeyUsage              = api.KeyUsage
	Latencies             = api.Latencies
	Whitelist             = api.Whitelist
	FederatedUpdateResult = api.FederatedUpdateResult
	OrganizationRequest   = api.OrganizationRequest
	// Organization is a registered federated participant.
	Organization       = federated.Organization
	GradientSubmission = api.GradientSubmission
	FederatedAccepted  = api.FederatedAccepted
	GlobalModel        = api.GlobalModel
	AdvertisedKeys     = api.AdvertisedKeys
	KeysSubmission     = api.KeysSubmission
	SealedShare        = api.SealedShare
	SharesSubmission   = api.SharesSubmission
	RevealedShare      = api.RevealedShare
	RevealsSubmission  = api.RevealsSubmission
	FederatedRound     = api.FederatedRound
	// FederatedTask is the task being trained, with its privacy budget.
	FederatedTask = api.FederatedTask
	// FederatedTaskRequest is the body of CreateFederatedTask: a task file
	// and its run's settings.
	FederatedTaskRequest = api.FederatedTaskRequest
	// FederatedRunSettings are a created task's settings, each optional.
	FederatedRunSettings = api.FederatedRunSettings
	TaskDefinition       = api.TaskDefinition
	// LearnedScaling is a learned feature's mean and scale.
	LearnedScaling = api.LearnedScaling
	ModelFeature   = api.ModelFeature
	// FederatedPrivacy is a run's budget with epsilon spent and remaining.
	FederatedPrivacy = api.FederatedPrivacy
	// ProofKeys are the Groth16 keys of one shape of a proved run.
	ProofKeys         = api.ProofKeys
	AuditEntry        = api.AuditEntry
	AuditList         = api.AuditList
	AuditVerification = api.AuditVerification
)
