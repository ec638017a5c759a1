package chain

// Regenerate the contract artifacts and bindings (needs node/npm and the Go
// module proxy); contracts/check-generated.sh checks they are current.
//
//go:generate go run ./internal/fixturegen -keys internal/fixture/testdata -solidity ../contracts/fixtures/GnarkVerifier.sol
//go:generate sh ../contracts/generate.sh
//go:generate go run github.com/ethereum/go-ethereum/cmd/abigen@v1.17.10 --v2 --abi internal/contracts/Groth16Verifier.abi --bin internal/contracts/Groth16Verifier.bin --pkg contracts --type Groth16Verifier --out internal/contracts/groth16verifier.go
//go:generate go run github.com/ethereum/go-ethereum/cmd/abigen@v1.17.10 --v2 --abi internal/contracts/GovernedRegistry.abi --bin internal/contracts/GovernedRegistry.bin --pkg contracts --type GovernedRegistry --out internal/contracts/governedregistry.go
//go:generate go run github.com/ethereum/go-ethereum/cmd/abigen@v1.17.10 --v2 --abi internal/fixture/GnarkVerifier.abi --bin internal/fixture/GnarkVerifier.bin --pkg fixture --type GnarkVerifier --out internal/fixture/gnarkverifier.go
