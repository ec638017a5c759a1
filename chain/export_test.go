package chain

import (
	"context"

	"github.com/ethereum/go-ethereum/common"
)

// DeployCode deploys arbitrary contract creation code (tests only).
func (l *Ledger) DeployCode(ctx context.Context, code []byte) (common.Address, error) {
	return l.deploy(ctx, code)
}

// CallContract runs an eth_call (tests only).
func (l *Ledger) CallContract(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	return l.call(ctx, to, data)
}

// ConstructorArgs exposes the verifier's constructor arguments (tests only).
func (vk VerifyingKey) ConstructorArgs() ([]byte, error) { return vk.constructorArgs() }
