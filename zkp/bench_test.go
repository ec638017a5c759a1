package zkp

import (
	"slices"
	"testing"
	"time"
)

// measure runs op b.N times and reports, besides ns/op, the median wall
// time per op (p50-ms) and the CPU time per op (cpu-ms/op), which is less
// sensitive to other load on the machine.
func measure(b *testing.B, op func() error) {
	b.Helper()
	b.ReportAllocs()
	samples := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(samples)), "cpu-ms/op")
}

// warmTables builds the fixed-base tables of circuit before a benchmark
// (in production the first proofs of a process run while they are built).
func warmTables(b *testing.B, circuit string) {
	ck, err := testSys.circuit(circuit)
	if err != nil {
		b.Fatal(err)
	}
	readyGroth16(b, ck)
}

func BenchmarkProveEligibility(b *testing.B) {
	warmTables(b, CircuitEligibility)
	p, err := NewProver(testSys)
	if err != nil {
		b.Fatal(err)
	}
	in := eligibleInput()
	measure(b, func() error {
		_, err := p.ProveEligibility(b.Context(), in)
		return err
	})
	info, _ := testSys.Info(CircuitEligibility)
	b.ReportMetric(float64(info.Constraints), "constraints")
}

func BenchmarkProvePrescription(b *testing.B) {
	warmTables(b, CircuitPrescription)
	p, err := NewProver(testSys)
	if err != nil {
		b.Fatal(err)
	}
	in := PrescriptionInput{Coverage: sampleCoverage(), DrugCode: "11289", ServiceDate: day("2026-06-01"), Covered: true}
	measure(b, func() error {
		_, err := p.ProvePrescription(b.Context(), in)
		return err
	})
	info, _ := testSys.Info(CircuitPrescription)
	b.ReportMetric(float64(info.Constraints), "constraints")
}

func BenchmarkVerify(b *testing.B) {
	warmTables(b, CircuitEligibility)
	p, err := NewProver(testSys)
	if err != nil {
		b.Fatal(err)
	}
	v, err := NewVerifier(testSys)
	if err != nil {
		b.Fatal(err)
	}
	proof, err := p.ProveEligibility(b.Context(), eligibleInput())
	if err != nil {
		b.Fatal(err)
	}
	measure(b, func() error { return v.Verify(b.Context(), proof) })
}
