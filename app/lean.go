package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

// The roles of HEALTHAGENTS_ROLE.
const (
	// RoleAll serves everything: the clinical agents, the chain, the
	// proofs, and federated learning.
	RoleAll = "all"
	// RoleFederated is a federated-learning coordinator only: the database,
	// the API keys and limits, and the federated tasks. No chain is
	// opened or embedded, no decision circuit is set up, and no Fernet key
	// is generated (one given by FERNET_KEY, or kept under DATA_DIR by an
	// earlier start, opens the records of /submit-federated-update). The
	// clinical routes answer 503.
	RoleFederated = "federated"
)

// errFederatedRole is every clinical decision's answer on a coordinator.
var errFederatedRole = healthagents.Errorf(healthagents.CodeUnavailable, "Service temporarily unavailable")

// openFederatedRole assembles a coordinator-only service (RoleFederated)
// into a, which OpenWithOutput has prepared (settings checked, DATA_DIR
// made).
func (a *App) openFederatedRole(ctx context.Context, cfg Config, logger *slog.Logger) (err error) {
	var opener healthagents.Opener = refusingOpener{}
	if kr, err := existingKeyring(cfg, logger); err != nil {
		return err
	} else if kr != nil {
		a.Keyring, opener = kr, kr.WithEnvelopeTTL(cfg.EnvelopeTTL)
	}
	if a.DB, err = OpenStore(ctx, cfg); err != nil {
		return err
	}
	a.closers = append(a.closers, a.DB)
	logger.Info("database ready", "database", redactDSN(cfg.DSN()), "dialect", a.DB.Dialect(), "role", cfg.Role)
	if err := a.openObservability(ctx, cfg); err != nil {
		return err
	}
	if err := a.openAccess(ctx, logger); err != nil {
		return err
	}
	// Decisions need a proof on a chain, which a coordinator has not: the
	// agents answer 503 rather than decide unproven.
	if a.Service, err = healthagents.New(opener, healthagents.WithLogger(logger), healthagents.WithAttestor(refusingAttestor{})); err != nil {
		return err
	}
	fed, err := a.openFederated(ctx, logger)
	if err != nil {
		return err
	}
	if err := a.Metrics.Register(newFederatedCollector(fed.API.Coordinator)); err != nil {
		return err
	}
	deps := server.Deps{
		Service: a.Service, Keys: a.Keys, Limiter: a.Limiter,
		Checks:    append([]server.Check{{Name: "database", Ping: a.DB.Ping}}, a.redisCheck(cfg.RedisURL)...),
		Federated: fed.API, FederatedAPI: fed.API,
	}
	if a.Keyring != nil {
		// Records are opened (/submit-federated-update): each access is in
		// the audit log, as on a full service.
		if a.Audit, err = openAudit(a.DB, store.WithKeySealer(a.Keyring)); err != nil {
			return err
		}
		deps.Audit = a.Audit
	}
	a.Handler, err = server.New(deps, a.serverOptions(cfg, logger)...)
	return err
}

// existingKeyring is the Fernet keyring of FERNET_KEY or the one an
// earlier start kept under DATA_DIR; nil when there is neither (nothing is
// generated).
func existingKeyring(cfg Config, logger *slog.Logger) (*cipher.Keyring, error) {
	if cfg.FernetKey == "" {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, fernetKeyFile)); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	return LoadKeyring(cfg, logger)
}

// refusingOpener opens nothing: without a Fernet key a coordinator reads
// no record.
type refusingOpener struct{}

func (refusingOpener) Open(context.Context, cipher.Envelope) ([]byte, error) {
	return nil, fmt.Errorf("%w: no Fernet key on a federated coordinator (set FERNET_KEY to host participants)", errFederatedRole)
}

// refusingAttestor proves nothing: a coordinator has no chain.
type refusingAttestor struct{}

var errNoChain = fmt.Errorf("%w: a federated coordinator (HEALTHAGENTS_ROLE=federated) has no chain", healthagents.ErrChainUnavailable)

func (refusingAttestor) AttestEligibility(context.Context, *record.Record, eligibility.Decision) (*healthagents.Attestation, error) {
	return nil, errNoChain
}

func (refusingAttestor) AttestPrescription(context.Context, *record.Record, []prescription.Decision, time.Time) (*healthagents.Attestation, error) {
	return nil, errNoChain
}
