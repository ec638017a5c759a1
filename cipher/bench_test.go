package cipher

import (
	"strings"
	"testing"
)

// A 1 KiB record, the size of a typical patient record.
var benchRecord = []byte(strings.Repeat("0123456789abcdef", 64))

func BenchmarkSeal(b *testing.B) {
	k := testRing(b)
	b.SetBytes(int64(len(benchRecord)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Seal("PT-000123", benchRecord, k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	k := testRing(b)
	env := seal(b, k, string(benchRecord))
	ctx := b.Context()
	b.SetBytes(int64(len(benchRecord)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Open(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}

// Open when the CID is a v0 dag-pb root, the costlier recomputation.
func BenchmarkOpenCIDv0(b *testing.B) {
	k := testRing(b)
	env := seal(b, k, string(benchRecord))
	env.IPFSCID = cidOf(b, []byte(env.EncryptedData), layoutV0)
	ctx := b.Context()
	b.SetBytes(int64(len(benchRecord)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Open(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCIDFor1MiB(b *testing.B) {
	data := pattern(1 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CIDFor(data); err != nil {
			b.Fatal(err)
		}
	}
}
