package api

// The orchestrator's probes: GET /livez and GET /readyz.

// Readiness answers GET /readyz when every dependency answers.
type Readiness struct {
	Status string            `json:"status" enum:"ready"`
	Checks map[string]string `json:"checks" doc:"Each dependency checked (database, chain, and redis and ipfs when configured) and \"ok\"."`
}

// Liveness answers GET /livez.
type Liveness struct {
	Status string `json:"status" enum:"alive"`
}
