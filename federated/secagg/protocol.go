package secagg

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"golang.org/x/crypto/chacha20poly1305"
)

// Domain-separation labels; the "v1" is part of the wire contract.
const (
	labelPairwise   = "healthagents/secagg/v1/pairwise"
	labelShareKey   = "healthagents/secagg/v1/share-encryption"
	labelCommitment = "healthagents/secagg/v1/self-mask-commitment"
	// SessionSize is the length of a round's session identifier.
	SessionSize = 32
	// MaxIDLen bounds a participant identifier, in bytes.
	MaxIDLen = 256
	keySize  = 32
)

// Protocol errors.
var (
	ErrParams   = errors.New("secagg: invalid parameters")
	ErrRoster   = errors.New("secagg: invalid roster")
	ErrProtocol = errors.New("secagg: protocol violation")
	ErrDecrypt  = errors.New("secagg: share ciphertext does not authenticate")
	ErrUnmask   = errors.New("secagg: cannot unmask")
)

// Params are the public parameters of one aggregation session (one round).
type Params struct {
	Session []byte `json:"session"` // 32 random bytes, fresh per round
	Dim     int    `json:"dim"`     // vector length, in elements
	// Group is the arithmetic of the session; nil means Ring64.
	Group Group `json:"-"`
}

// MinThreshold is the smallest Shamir threshold a client accepts for a roster
// of n: a strict majority, and never below 2. A coordinator may ask for more.
func MinThreshold(n int) int { return max(2, n/2+1) }

// Validate checks the parameters.
func (p Params) Validate() error {
	switch {
	case len(p.Session) != SessionSize:
		return fmt.Errorf("%w: session must be %d bytes", ErrParams, SessionSize)
	case p.Dim < 1 || p.Dim > MaxDim || p.group().Words() < 1 || p.Dim > MaxDim/p.group().Words():
		return fmt.Errorf("%w: dim %d", ErrParams, p.Dim)
	}
	return nil
}

// PublicKeys is what a participant advertises in the first phase: one X25519
// key for encrypting shares (c_u^PK) and one for pairwise masks (s_u^PK).
type PublicKeys struct {
	ID     string `json:"id"`
	Cipher []byte `json:"cipher_public_key"`
	Mask   []byte `json:"mask_public_key"`
}

// Validate checks lengths and the identifier.
func (k PublicKeys) Validate() error {
	if err := validateID(k.ID); err != nil {
		return err
	}
	if len(k.Cipher) != keySize || len(k.Mask) != keySize {
		return fmt.Errorf("%w: keys of %q must be %d bytes", ErrRoster, k.ID, keySize)
	}
	if bytes.Equal(k.Cipher, k.Mask) {
		return fmt.Errorf("%w: %q advertises the same key twice", ErrRoster, k.ID)
	}
	return nil
}

func validateID(id string) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("%w: participant id length %d", ErrRoster, len(id))
	}
	return nil
}

// EncryptedShare carries, from one participant to another through the
// coordinator, the recipient's shares of the sender's mask key and self-mask
// seed, sealed with XChaCha20-Poly1305 under a key the coordinator cannot
// derive.
type EncryptedShare struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Ciphertext []byte `json:"ciphertext"`
}

// ShareKeysMessage is a participant's second-phase message.
type ShareKeysMessage struct {
	From string `json:"from"`
	// Commitment is SHA-256 over the session and the self-mask seed b_u; the
	// coordinator checks the reconstructed seed against it.
	Commitment []byte           `json:"commitment"`
	Shares     []EncryptedShare `json:"shares"`
}

// ShareKind says which secret a revealed share belongs to.
type ShareKind string

// Share kinds revealed in the unmasking phase.
const (
	SelfMask ShareKind = "self_mask" // share of b_v, for a survivor v
	MaskKey  ShareKind = "mask_key"  // share of s_v^SK, for a dropped v
)

// RevealedShare is a share a survivor hands to the coordinator in the last
// phase. For any participant v, an honest client reveals shares of only one
// of its two secrets, never both.
type RevealedShare struct {
	From  string    `json:"from"`
	Of    string    `json:"of"`
	Kind  ShareKind `json:"kind"`
	Share Share     `json:"share"`
}

type sharePair struct{ key, self Share }

// clientState is the phase a Client is in.
type clientState int

const (
	stateKeys clientState = iota
	stateShared
	stateMasked
	stateDone
)

// Client is one participant's side of a session. It holds the secrets and
// must not leave the participant's process. It is not safe for concurrent use.
type Client struct {
	id        string
	params    Params
	threshold int
	rand      io.Reader
	cipher    *ecdh.PrivateKey
	mask      *ecdh.PrivateKey
	selfKey   [SeedSize]byte

	state    clientState
	roster   map[string]PublicKeys
	order    []string // sorted ids of the roster (U1)
	u2       []string
	received map[string]sharePair // shares held for each sender (self included)
}

// NewClient creates the participant's key pairs for one session.
func NewClient(rand io.Reader, id string, p Params) (*Client, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := validateID(id); err != nil {
		return nil, err
	}
	c1, err := ecdh.X25519().GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("secagg: key generation: %w", err)
	}
	c2, err := ecdh.X25519().GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("secagg: key generation: %w", err)
	}
	return &Client{id: id, params: p, rand: rand, cipher: c1, mask: c2}, nil
}

// Keys returns the public keys to advertise.
func (c *Client) Keys() PublicKeys {
	return PublicKeys{ID: c.id, Cipher: c.cipher.PublicKey().Bytes(), Mask: c.mask.PublicKey().Bytes()}
}

// checkRoster validates a roster and returns it keyed and the sorted ids.
func checkRoster(roster []PublicKeys, t int) (map[string]PublicKeys, []string, error) {
	if len(roster) < t || len(roster) > MaxShares {
		return nil, nil, fmt.Errorf("%w: %d participants for threshold %d", ErrRoster, len(roster), t)
	}
	byID := make(map[string]PublicKeys, len(roster))
	keys := make(map[string]bool, 2*len(roster))
	for _, k := range roster {
		if err := k.Validate(); err != nil {
			return nil, nil, err
		}
		if _, dup := byID[k.ID]; dup {
			return nil, nil, fmt.Errorf("%w: %q appears twice", ErrRoster, k.ID)
		}
		if keys[string(k.Cipher)] || keys[string(k.Mask)] {
			return nil, nil, fmt.Errorf("%w: a public key is reused", ErrRoster)
		}
		keys[string(k.Cipher)], keys[string(k.Mask)] = true, true
		byID[k.ID] = k
	}
	order := make([]string, 0, len(byID))
	for id := range byID {
		order = append(order, id)
	}
	slices.Sort(order)
	return byID, order, nil
}

// xOf returns the Shamir x coordinate of id: its 1-based rank in the roster.
func xOf(order []string, id string) (uint16, bool) {
	i, ok := slices.BinarySearch(order, id)
	return uint16(i + 1), ok
}

// ShareKeys draws the self-mask seed b_u, shares it and the mask private key
// t-of-n among the roster (U1, which must include this client with its own
// keys) and seals each recipient's pair of shares. A threshold below
// MinThreshold(len(roster)) or above len(roster) is refused.
func (c *Client) ShareKeys(roster []PublicKeys, t int) (*ShareKeysMessage, error) {
	if c.state != stateKeys {
		return nil, fmt.Errorf("%w: ShareKeys called twice", ErrProtocol)
	}
	if t < MinThreshold(len(roster)) || t > len(roster) {
		return nil, fmt.Errorf("%w: threshold %d for %d participants", ErrParams, t, len(roster))
	}
	byID, order, err := checkRoster(roster, t)
	if err != nil {
		return nil, err
	}
	me, ok := byID[c.id]
	if !ok || !bytes.Equal(me.Cipher, c.cipher.PublicKey().Bytes()) || !bytes.Equal(me.Mask, c.mask.PublicKey().Bytes()) {
		return nil, fmt.Errorf("%w: roster does not carry this participant's keys", ErrRoster)
	}
	if _, err := io.ReadFull(c.rand, c.selfKey[:]); err != nil {
		return nil, fmt.Errorf("secagg: reading randomness: %w", err)
	}
	n := len(order)
	c.threshold = t
	keyShares, err := Split(c.rand, c.mask.Bytes(), t, n)
	if err != nil {
		return nil, err
	}
	selfShares, err := Split(c.rand, c.selfKey[:], t, n)
	if err != nil {
		return nil, err
	}
	msg := &ShareKeysMessage{From: c.id, Commitment: c.params.group().Commit(c.params.Session, &c.selfKey)}
	c.received = make(map[string]sharePair, n)
	for i, to := range order {
		if to == c.id {
			c.received[c.id] = sharePair{key: keyShares[i], self: selfShares[i]}
			continue
		}
		ct, err := c.seal(byID[to], keyShares[i], selfShares[i])
		if err != nil {
			return nil, err
		}
		msg.Shares = append(msg.Shares, EncryptedShare{From: c.id, To: to, Ciphertext: ct})
	}
	c.roster, c.order, c.state = byID, order, stateShared
	return msg, nil
}

func commitment(session, seed []byte) []byte {
	h := sha256.New()
	h.Write([]byte(labelCommitment))
	h.Write(session)
	h.Write(seed)
	return h.Sum(nil)
}

func lp(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func (c *Client) aeadFor(peer PublicKeys) (cipherAEAD, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer.Cipher)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRoster, err)
	}
	shared, err := c.cipher.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: key agreement with %q: %v", ErrRoster, peer.ID, err)
	}
	key, err := hkdf.Key(sha256.New, shared, c.params.Session, labelShareKey, chacha20poly1305.KeySize)
	if err != nil {
		return nil, fmt.Errorf("secagg: hkdf: %w", err)
	}
	return chacha20poly1305.NewX(key)
}

type cipherAEAD interface {
	Seal(dst, nonce, plaintext, additionalData []byte) []byte
	Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
	NonceSize() int
}

func (c *Client) aad(from, to string) []byte {
	b := append([]byte(nil), c.params.Session...)
	return lp(lp(b, from), to)
}

const sharePlainSize = 2 * ShareSize

func (c *Client) seal(to PublicKeys, key, self Share) ([]byte, error) {
	aead, err := c.aeadFor(to)
	if err != nil {
		return nil, err
	}
	kb, err := key.MarshalBinary()
	if err != nil {
		return nil, err
	}
	sb, err := self.MarshalBinary()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+sharePlainSize+chacha20poly1305.Overhead)
	if _, err := io.ReadFull(c.rand, nonce); err != nil {
		return nil, fmt.Errorf("secagg: reading randomness: %w", err)
	}
	return aead.Seal(nonce, nonce, append(kb, sb...), c.aad(c.id, to.ID)), nil
}

// open authenticates and decodes a ciphertext addressed to this client.
func (c *Client) open(es EncryptedShare) (sharePair, error) {
	from, ok := c.roster[es.From]
	if !ok || es.To != c.id {
		return sharePair{}, fmt.Errorf("%w: share from %q to %q", ErrProtocol, es.From, es.To)
	}
	aead, err := c.aeadFor(from)
	if err != nil {
		return sharePair{}, err
	}
	if len(es.Ciphertext) < aead.NonceSize() {
		return sharePair{}, fmt.Errorf("%w: from %q", ErrDecrypt, es.From)
	}
	ns := aead.NonceSize()
	pt, err := aead.Open(nil, es.Ciphertext[:ns], es.Ciphertext[ns:], c.aad(es.From, c.id))
	if err != nil {
		return sharePair{}, fmt.Errorf("%w: from %q", ErrDecrypt, es.From)
	}
	return decodeSharePair(pt, c.order, c.id)
}

// decodeSharePair parses a decrypted share pair and checks both shares carry
// the recipient's x coordinate.
func decodeSharePair(pt []byte, order []string, recipient string) (sharePair, error) {
	if len(pt) != sharePlainSize {
		return sharePair{}, fmt.Errorf("%w: share plaintext of %d bytes", ErrMalformedShare, len(pt))
	}
	var p sharePair
	if err := p.key.UnmarshalBinary(pt[:ShareSize]); err != nil {
		return sharePair{}, err
	}
	if err := p.self.UnmarshalBinary(pt[ShareSize:]); err != nil {
		return sharePair{}, err
	}
	x, _ := xOf(order, recipient)
	if p.key.X != x || p.self.X != x {
		return sharePair{}, fmt.Errorf("%w: share for the wrong x", ErrMalformedShare)
	}
	return p, nil
}

// pairwiseSeed derives the seed shared by a and b from their key agreement.
func pairwiseSeed(session []byte, priv *ecdh.PrivateKey, a, b string, peerMask []byte) (*[SeedSize]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peerMask)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRoster, err)
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: mask key agreement: %v", ErrRoster, err)
	}
	lo, hi := min(a, b), max(a, b)
	info := string(lp(lp([]byte(labelPairwise), lo), hi))
	k, err := hkdf.Key(sha256.New, shared, session, info, SeedSize)
	if err != nil {
		return nil, fmt.Errorf("secagg: hkdf: %w", err)
	}
	return (*[SeedSize]byte)(k), nil
}

// maskSign is +1 when u adds the pairwise mask it shares with v, -1 when it
// subtracts it; the two ends of a pair always disagree, so the masks cancel.
func maskSign(u, v string) int {
	if u < v {
		return 1
	}
	return -1
}

// checkSubset verifies that ids are distinct members of within (a sorted set)
// and contain must, and returns them sorted.
func checkSubset(ids []string, within []string, must string, t int) ([]string, error) {
	out := slices.Clone(ids)
	slices.Sort(out)
	if len(slices.Compact(slices.Clone(out))) != len(out) {
		return nil, fmt.Errorf("%w: repeated participant", ErrProtocol)
	}
	for _, id := range out {
		if _, ok := slices.BinarySearch(within, id); !ok {
			return nil, fmt.Errorf("%w: %q was not in the previous phase", ErrProtocol, id)
		}
	}
	if must != "" {
		if _, ok := slices.BinarySearch(out, must); !ok {
			return nil, fmt.Errorf("%w: this participant is not in the set", ErrProtocol)
		}
	}
	if len(out) < t {
		return nil, fmt.Errorf("%w: %d participants left, threshold %d", ErrProtocol, len(out), t)
	}
	return out, nil
}

// MaskInput masks x (already quantized) for the set u2 of participants that
// completed ShareKeys, after opening every share addressed to this client by
// a member of u2:
//
//	y_u = x_u + PRG(b_u) + sum_{v in U2, v != u} sign(u,v) PRG(s_{u,v})
func (c *Client) MaskInput(u2 []string, incoming []EncryptedShare, x []uint64) (MaskedInput, error) {
	if c.state != stateShared {
		return nil, fmt.Errorf("%w: MaskInput out of order", ErrProtocol)
	}
	if err := c.params.CheckVector(x); err != nil {
		return nil, fmt.Errorf("%w: input: %w", ErrParams, err)
	}
	set, err := checkSubset(u2, c.order, c.id, c.threshold)
	if err != nil {
		return nil, err
	}
	for _, es := range incoming {
		if _, ok := slices.BinarySearch(set, es.From); !ok {
			continue // a sender that dropped out before its shares were collected
		}
		if _, dup := c.received[es.From]; dup {
			return nil, fmt.Errorf("%w: two shares from %q", ErrProtocol, es.From)
		}
		p, err := c.open(es)
		if err != nil {
			return nil, err
		}
		c.received[es.From] = p
	}
	for _, v := range set {
		if _, ok := c.received[v]; !ok {
			return nil, fmt.Errorf("%w: no share from %q", ErrProtocol, v)
		}
	}
	y := make(MaskedInput, len(x))
	copy(y, x)
	g := c.params.group()
	if err := g.Expand(&c.selfKey, y, 1); err != nil {
		return nil, err
	}
	for _, v := range set {
		if v == c.id {
			continue
		}
		seed, err := pairwiseSeed(c.params.Session, c.mask, c.id, v, c.roster[v].Mask)
		if err != nil {
			return nil, err
		}
		if err := g.Expand(seed, y, maskSign(c.id, v)); err != nil {
			return nil, err
		}
	}
	c.u2, c.state = set, stateMasked
	return y, nil
}

// Unmask answers the coordinator's last request: u3 is the set whose masked
// inputs it holds. For a survivor (in u3) the client reveals its share of b_v;
// for a participant that dropped after sharing keys (in U2 but not u3), its
// share of s_v^SK. u3 must be a subset of the U2 this client masked for, so a
// participant is never revealed twice; the client answers once.
func (c *Client) Unmask(u3 []string) ([]RevealedShare, error) {
	if c.state != stateMasked {
		return nil, fmt.Errorf("%w: Unmask out of order", ErrProtocol)
	}
	set, err := checkSubset(u3, c.u2, c.id, c.threshold)
	if err != nil {
		return nil, err
	}
	out := make([]RevealedShare, 0, len(c.u2))
	for _, v := range c.u2 {
		p := c.received[v]
		if _, alive := slices.BinarySearch(set, v); alive {
			out = append(out, RevealedShare{From: c.id, Of: v, Kind: SelfMask, Share: p.self})
		} else {
			out = append(out, RevealedShare{From: c.id, Of: v, Kind: MaskKey, Share: p.key})
		}
	}
	c.state = stateDone
	return out, nil
}
