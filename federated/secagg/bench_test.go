package secagg

import (
	"fmt"
	"testing"
)

// BenchmarkUnmask measures the coordinator's unmasking (share reconstruction,
// PRG expansion, summation) of a 10,000-word vector.
func BenchmarkUnmask(b *testing.B) {
	for _, n := range []int{3, 10, 100} {
		for _, drops := range []int{0, 1} {
			b.Run(fmt.Sprintf("participants=%d/dropped=%d/dim=10000", n, drops), func(b *testing.B) {
				drop := map[string]bool{}
				for i := range drops {
					drop[fmt.Sprintf("org-%03d", i)] = true
				}
				s := runSession(b, n, MinThreshold(n), 10000, drop)
				b.ResetTimer()
				for b.Loop() {
					if _, err := Unmask(b.Context(), s.tr); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMaskInput measures one participant's masking of a 10,000-word
// vector in a session of n.
func BenchmarkMaskInput(b *testing.B) {
	for _, n := range []int{3, 10, 100} {
		b.Run(fmt.Sprintf("participants=%d/dim=10000", n), func(b *testing.B) {
			s := runSession(b, n, MinThreshold(n), 10000, nil)
			c := s.clients[0]
			x := make([]uint64, 10000)
			b.ResetTimer()
			for b.Loop() {
				c.state = stateShared // replay the masking step
				if _, err := c.MaskInput(c.u2, nil, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
