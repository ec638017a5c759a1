package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/healthagents/healthagents/client"
)

// participantState is what `healthagents participant` keeps between its own
// restarts (--state): which organization and task it trains, and how far it
// got, and the learned scaling of a task with learned features once its
// statistics round closed. It holds no record or update; its one secret is
// the organization's long-term X25519 private key when the command made
// the key pair itself (registerOrganization), so the file is written 0600.
// A round in progress when the process died is one the organization
// dropped out of (its round secrets were only in memory), and the
// restarted process joins the next one.
type participantState struct {
	Org      string `json:"organization_id"`
	TaskID   string `json:"task_id"`
	TaskHash string `json:"task_hash"`
	// RoundsJoined counts the rounds whose model holds this organization's
	// update; RoundsLeftOut the rounds it waited through without one
	// (refused, too late, or abandoned).
	RoundsJoined  int    `json:"rounds_joined"`
	RoundsLeftOut int    `json:"rounds_left_out,omitempty"`
	LastRound     int    `json:"last_round"`
	ModelVersion  string `json:"model_version,omitempty"`
	// LearnedScaling is what the task's statistics round learned, kept so
	// that a restarted participant refuses to train with another scaling.
	LearnedScaling []client.LearnedScaling `json:"learned_scaling,omitempty"`
	// PrivateKey is the organization's long-term X25519 private key (hex),
	// whose public half the command registered; empty when the
	// organization was registered otherwise.
	PrivateKey string    `json:"x25519_private_key,omitempty"`
	Updated    time.Time `json:"updated_at"`
}

// loadParticipantState reads path; a missing file is a fresh start (nil).
func loadParticipantState(path string) (*participantState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("participant: state file: %w", err)
	}
	var s participantState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("participant: state file %s is not a participant state (remove it to start afresh)", path)
	}
	return &s, nil
}

// save writes the state atomically (a temporary file renamed over path).
func (s *participantState) save(path string) error {
	s.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".participant-state-*")
	if err != nil {
		return fmt.Errorf("participant: state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil { // it may hold the organization's private key
		tmp.Close()
		return fmt.Errorf("participant: state file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("participant: state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("participant: state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("participant: state file: %w", err)
	}
	return nil
}
