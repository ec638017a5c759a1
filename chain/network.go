package chain

import (
	"fmt"
	"net/url"
)

// NetworkName names a chain id: the public networks by their usual name,
// 1337 and 31337 (geth --dev, Hardhat, Anvil, Ganache) as "dev", any other as
// "chain-<id>".
func NetworkName(chainID uint64) string {
	switch chainID {
	case 1:
		return "mainnet"
	case 11155111:
		return "sepolia"
	case 17000:
		return "holesky"
	case 560048:
		return "hoodi"
	case 10:
		return "optimism"
	case 137:
		return "polygon"
	case 8453:
		return "base"
	case 42161:
		return "arbitrum-one"
	case 1337, 31337:
		return "dev"
	default:
		return fmt.Sprintf("chain-%d", chainID)
	}
}

// redactEndpoint keeps the scheme, host and port of a JSON-RPC URL and hides
// user info, path and query, where hosted providers put API keys.
func redactEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "(unparsable endpoint)"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		out += "/(redacted)"
	}
	return out
}
