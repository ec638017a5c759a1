package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// KeySender sends transactions signed by one key (e.g. the owner's, given on
// the command line) through a Backend and waits for their receipts. It keeps
// no nonce state: one transaction at a time per key.
type KeySender struct {
	Client Backend
	Key    *ecdsa.PrivateKey
	Poll   time.Duration // receipt polling interval; 0 means 50 ms
}

// From is the sending address.
func (s KeySender) From() common.Address { return crypto.PubkeyToAddress(s.Key.PublicKey) }

// Transact signs, sends and waits for one transaction (a creation when to is
// nil). A revert while estimating returns ErrReverted without a receipt; a
// mined status-0 transaction returns its receipt with ErrReverted.
func (s KeySender) Transact(ctx context.Context, to *common.Address, data []byte, gas uint64) (*types.Receipt, error) {
	from := s.From()
	id, err := s.Client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain: chain id: %w", unavailable(err))
	}
	if gas == 0 {
		est, err := s.Client.EstimateGas(ctx, ethereum.CallMsg{From: from, To: to, Data: data})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrReverted, err)
		}
		gas = est + est/5
	}
	nonce, err := s.Client.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("chain: nonce: %w", unavailable(err))
	}
	tip, err := s.Client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain: tip: %w", unavailable(err))
	}
	head, err := s.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("chain: head: %w", unavailable(err))
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: tip,
		GasFeeCap: feeCap, Gas: gas, To: to, Data: data}), types.LatestSignerForChainID(id), s.Key)
	if err != nil {
		return nil, fmt.Errorf("chain: sign: %w", err)
	}
	if err := s.Client.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("chain: send: %w", unavailable(err))
	}
	poll := s.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		r, err := s.Client.TransactionReceipt(ctx, tx.Hash())
		if err == nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return r, fmt.Errorf("%w: tx %s", ErrReverted, r.TxHash.Hex())
			}
			return r, nil
		}
		if !errors.Is(err, ethereum.NotFound) {
			return nil, fmt.Errorf("chain: receipt: %w", unavailable(err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chain: waiting for %s: %w", tx.Hash().Hex(), ErrUnavailable)
		case <-t.C:
		}
	}
}
