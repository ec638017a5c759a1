package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/ipfs"
	"github.com/healthagents/healthagents/server"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
)

// openIPFS returns the client of the Kubo node at IPFS_ENDPOINT, or nil
// when it is not set. The node is not required to be up at start: /health
// reports it (ipfsCheck) and registrations answer 503 while it is down.
func openIPFS(ctx context.Context, cfg Config, logger *slog.Logger) (*ipfs.Client, error) {
	if cfg.IPFSEndpoint == "" {
		return nil, nil
	}
	node, err := ipfs.New(cfg.IPFSEndpoint)
	if err != nil {
		return nil, fmt.Errorf("IPFS_ENDPOINT: %w", err)
	}
	if v, err := node.Version(ctx); err != nil {
		logger.Warn("ipfs node not reachable yet", "endpoint", node.Endpoint(), "err", err)
	} else {
		logger.Info("ipfs node ready", "endpoint", node.Endpoint(), "version", v)
	}
	return node, nil
}

// ipfsCheck is the /health check of the node, or none without one.
func ipfsCheck(node *ipfs.Client) []server.Check {
	if node == nil {
		return nil
	}
	return []server.Check{{Name: "ipfs", Ping: node.Ping}}
}

// withIPFS returns patients itself without a node, else the registry that
// also pins every registered envelope's ciphertext on the node.
func withIPFS(patients healthagents.PatientRegistry, node *ipfs.Client, logger *slog.Logger) healthagents.PatientRegistry {
	if node == nil {
		return patients
	}
	return &pinnedRegistry{inner: patients, node: node, logger: logger}
}

// pinnedRegistry is a PatientRegistry that keeps the ciphertext of every
// envelope it stores pinned on a Kubo node under the envelope's ipfs_cid
// (docs/decisions/v1.md, "IPFS"):
//
//   - PutPatient adds the ciphertext to the node under the options that
//     reproduce ipfs_cid, requires the node to compute that CID, pins it and
//     reads it back (ipfs.Client.Put) before storing the envelope; a
//     replaced envelope's old CID is unpinned afterwards, best effort;
//   - DeletePatient deletes the envelope, then unpins its CID, best effort;
//   - Patient reads the inner registry only.
//
// Before unpinning, a registry that can say so (cidReferences; the
// store's PatientStore) is asked whether another stored envelope, of any
// owner, still names the CID (in its v0 or v1 spelling): the same envelope
// registered by two organizations keeps its pin until the last one goes.
// When the question cannot be answered, the pin is kept.
type pinnedRegistry struct {
	inner  healthagents.PatientRegistry
	node   *ipfs.Client
	logger *slog.Logger
}

var _ healthagents.PatientRegistry = (*pinnedRegistry)(nil)

// cidReferences is the optional capability of a registry to say whether a
// CID is still named by a stored envelope.
type cidReferences interface {
	CIDInUse(ctx context.Context, cids ...string) (bool, error)
}

const pinPrefix = "Patient registration failed"

// PutPatient pins the envelope's ciphertext, then stores the envelope.
func (r *pinnedRegistry) PutPatient(ctx context.Context, owner string, env healthagents.PatientData) error {
	want, err := cid.Decode(env.IPFSCID)
	if err != nil {
		return healthagents.WrapError(healthagents.CodeInvalid, err, "Invalid the service CID format")
	}
	if err := r.pin(ctx, env.EncryptedData, want); err != nil {
		return err
	}
	old, oerr := r.inner.Patient(ctx, owner, env.PatientID)
	if err := r.inner.PutPatient(ctx, owner, env); err != nil {
		return err
	}
	if oerr == nil {
		if prev, err := cid.Decode(old.IPFSCID); err != nil || !prev.Equals(want) {
			r.unpin(ctx, old.IPFSCID)
		}
	}
	return nil
}

// pin puts the bytes ipfs_cid addresses on the node: encrypted_data as
// received, else the token text inside Base64 (the two candidates
// cipher.Keyring.Open accepts).
func (r *pinnedRegistry) pin(ctx context.Context, encrypted string, want cid.Cid) error {
	candidates := [][]byte{[]byte(encrypted)}
	if inner, ok := tokenText(encrypted); ok && string(inner) != encrypted {
		candidates = append(candidates, inner)
	}
	var err error
	for _, data := range candidates {
		err = r.node.Put(ctx, data, want)
		if !errors.Is(err, ipfs.ErrCIDMismatch) {
			break
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ipfs.ErrCIDMismatch):
		r.logger.WarnContext(ctx, "ipfs_cid refused by the ipfs node", "err", err)
		return healthagents.WrapError(healthagents.CodeInvalid, err,
			pinPrefix+": ipfs_cid is not the CID the IPFS node computes for encrypted_data")
	case errors.Is(err, ipfs.ErrUnsupportedCID):
		return healthagents.WrapError(healthagents.CodeInvalid, err,
			pinPrefix+": ipfs_cid cannot be stored in IPFS (its hash function, digest length or codec is not one ipfs add produces)")
	}
	// The node is down, slow or answering garbage: V1 logs it and answers
	// 503 Service temporarily unavailable.
	return fmt.Errorf("ipfs pin: %w", err)
}

// tokenText returns the Base64-decoded text of s when it is Base64 of a
// Fernet token's text (which starts "gAAAAA": version 0x80 and the high
// bytes of the timestamp). Either alphabet, padded or not, line breaks
// ignored, as cipher accepts.
func tokenText(s string) ([]byte, bool) {
	s = strings.NewReplacer("\r", "", "\n", "").Replace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, strings.HasPrefix(string(b), "gAAAAA")
		}
	}
	return nil, false
}

// Patient returns the stored envelope.
func (r *pinnedRegistry) Patient(ctx context.Context, owner, patientID string) (healthagents.PatientData, error) {
	return r.inner.Patient(ctx, owner, patientID)
}

// DeletePatient deletes the envelope, then unpins its ciphertext.
func (r *pinnedRegistry) DeletePatient(ctx context.Context, owner, patientID string) error {
	env, err := r.inner.Patient(ctx, owner, patientID)
	if err != nil {
		return err
	}
	if err := r.inner.DeletePatient(ctx, owner, patientID); err != nil {
		return err
	}
	r.unpin(ctx, env.IPFSCID)
	return nil
}

// unpin removes a pin, best effort: the record is already gone or replaced,
// so a failure is logged (with the CID, never the data) and the request
// still succeeds. The node's garbage collector reclaims the blocks.
func (r *pinnedRegistry) unpin(ctx context.Context, s string) {
	c, err := cid.Decode(s)
	if err == nil {
		if refs, ok := r.inner.(cidReferences); ok {
			inUse, rerr := refs.CIDInUse(context.WithoutCancel(ctx), spellings(c, s)...)
			switch {
			case rerr != nil:
				r.logger.WarnContext(ctx, "ipfs unpin skipped: could not tell whether another envelope names the CID; it stays pinned", "cid", s, "err", rerr)
				return
			case inUse:
				return
			}
		}
		err = r.node.Unpin(context.WithoutCancel(ctx), c)
	}
	if err != nil && !errors.Is(err, ipfs.ErrNotPinned) {
		r.logger.WarnContext(ctx, "ipfs unpin failed; the CID stays pinned", "cid", s, "err", err)
	}
}

// spellings are the texts under which an envelope may name c: as written,
// as CIDv1 in base32 (what ipfs add --cid-version=1 prints), and as CIDv0
// where c has a v0 form (dag-pb over SHA-256).
func spellings(c cid.Cid, written string) []string {
	out := []string{written}
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(cid.NewCidV1(c.Type(), c.Hash()).String())
	if c.Type() == cid.DagProtobuf {
		if dec, err := mh.Decode(c.Hash()); err == nil && dec.Code == mh.SHA2_256 && dec.Length == 32 {
			add(cid.NewCidV0(c.Hash()).String())
		}
	}
	return out
}
