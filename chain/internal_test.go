package chain

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactEndpoint(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:8545":                  "http://127.0.0.1:8545",
		"http://127.0.0.1:8545/":                 "http://127.0.0.1:8545",
		"https://mainnet.infura.io/v3/SECRETKEY": "https://mainnet.infura.io/(redacted)",
		"https://user:pass@node.example:8545":    "https://node.example:8545/(redacted)",
		"wss://eth.example/ws?apikey=SECRET":     "wss://eth.example/(redacted)",
		"not a url":                              "(unparsable endpoint)",
	} {
		got := redactEndpoint(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "SECRET")
		assert.NotContains(t, got, "pass")
	}
}

func TestKindBytes32(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{"eligibility", "prescription", "k", Kind("12345678901234567890123456789012")} {
		b, err := k.bytes32()
		require.NoError(t, err, k)
		assert.Equal(t, k, kindFromBytes32(b))
	}
	for _, bad := range []Kind{"", "a\x00b", Kind("123456789012345678901234567890123")} {
		_, err := bad.bytes32()
		assert.Error(t, err, bad)
	}
}

func TestProducerWakesWaitersOnStop(t *testing.T) {
	t.Parallel()
	p := newProducer(func() (h common.Hash) { return h }, 0, nil)
	ch := p.next()
	p.stop()
	<-ch // closed by stop
	<-p.next()
	p.stop() // idempotent
}
