// Package synth generates deterministic synthetic patient cohorts for the
// default federated diagnosis task: tests, benchmarks, the privacy table and
// examples use it. The records are fiction; no real data is involved.
//
// Every cohort shares one true risk model (a logistic model of glucose, BMI,
// age and systolic blood pressure), while its feature distributions and
// therefore its prevalence differ: the covariate shift three hospitals with
// different populations would show.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/healthagents/healthagents/record"
)

// Cohort describes one hospital's population.
type Cohort struct {
	Name        string
	Size        int
	Seed        uint64
	GlucoseMean float64 // mg/dL
	BMIMean     float64
	AgeMean     float64 // years
	SBPMean     float64 // mmHg
	MissingBP   float64 // probability that systolic_bp is not recorded
}

// ThreeCohorts returns three cohorts of size records each with clearly
// different populations: a general hospital, a diabetes clinic with older,
// heavier, more hyperglycaemic patients, and a young urban practice.
func ThreeCohorts(size int, seed uint64) []Cohort {
	return []Cohort{
		{Name: "general", Size: size, Seed: seed*3 + 1, GlucoseMean: 115, BMIMean: 27, AgeMean: 52, SBPMean: 128, MissingBP: 0.05},
		{Name: "diabetes-clinic", Size: size, Seed: seed*3 + 2, GlucoseMean: 140, BMIMean: 32, AgeMean: 60, SBPMean: 135},
		{Name: "urban-young", Size: size, Seed: seed*3 + 3, GlucoseMean: 100, BMIMean: 24, AgeMean: 35, SBPMean: 118, MissingBP: 0.2},
	}
}

// TrueLogit is the generating risk model on raw values.
func TrueLogit(glucose, bmi, age, sbp float64) float64 {
	return -0.4 + 1.8*(glucose-120)/30 + 0.9*(bmi-28)/6 + 0.6*(age-50)/15 + 0.4*(sbp-125)/15
}

// Records generates the cohort's records; the same cohort always yields the
// same records.
func Records(c Cohort) []*record.Record {
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	ref := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]*record.Record, 0, c.Size)
	for i := range c.Size {
		g := c.GlucoseMean + 25*rng.NormFloat64()
		b := c.BMIMean + 5*rng.NormFloat64()
		a := math.Max(18, math.Min(95, c.AgeMean+14*rng.NormFloat64()))
		s := c.SBPMean + 14*rng.NormFloat64()
		p := 1 / (1 + math.Exp(-TrueLogit(g, b, a, s)))
		diag := "negative"
		if rng.Float64() < p {
			diag = "positive"
		}
		obs := map[string]float64{"glucose": round1(g), "bmi": round1(b)}
		if rng.Float64() >= c.MissingBP {
			obs["systolic_bp"] = math.Round(s)
		}
		birth := ref.AddDate(-int(a), 0, -rng.IntN(365))
		out = append(out, &record.Record{
			Schema:       record.Schema,
			PatientID:    fmt.Sprintf("%s-%06d", c.Name, i),
			BirthDate:    birth.Format(record.DateLayout),
			Observations: obs,
			Diagnosis:    diag,
		})
	}
	return out
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
