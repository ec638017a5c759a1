package federated

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/healthagents/healthagents/record"
)

// ErrTask is wrapped by errors about a task configuration.
var ErrTask = errors.New("federated: invalid task")

// Feature is one model input. Its raw value comes from the record's
// observations under Name, except for the derived feature "age" (when no
// observation of that name exists), which is the age in whole years at the
// task's ReferenceDate from birth_date.
//
// Standardization is z = (x - Mean) / Scale, clamped to [-ClampZ, ClampZ];
// a missing value is imputed as the mean (z = 0). Mean and Scale are given
// by configuration, or, for a Learned feature, learned before training by a
// statistics round: a secure sum of every participant's count, sum and sum
// of squares of the feature's values clipped to [Min, Max] (see
// docs/decisions/federated.md). No single hospital's statistics are
// revealed, only the pooled ones.
type Feature struct {
	Name  string  `json:"name"`
	Mean  float64 `json:"mean"`
	Scale float64 `json:"scale"`
	// Learned features have no Mean and Scale in the task (both 0): they
	// come from the statistics round (WithScaling). Every raw value is
	// clipped to [Min, Max], for the statistics and for training alike.
	Learned bool    `json:"learned,omitempty"`
	Min     float64 `json:"min,omitempty"`
	Max     float64 `json:"max,omitempty"`
}

// LearnedScaling is the mean and scale a statistics round learned for one
// feature, from Count values pooled over the round's participants.
type LearnedScaling struct {
	Name  string  `json:"name"`
	Mean  float64 `json:"mean"`
	Scale float64 `json:"scale"`
	Count int64   `json:"count"`
}

// Learns reports whether the task has a learned feature, so its training
// waits for a statistics round.
func (t Task) Learns() bool {
	for _, f := range t.Features {
		if f.Learned {
			return true
		}
	}
	return false
}

// learned returns the indexes of the learned features, in task order.
func (t Task) learned() []int {
	var out []int
	for i, f := range t.Features {
		if f.Learned {
			out = append(out, i)
		}
	}
	return out
}

// WithScaling returns the task with the learned features' Mean and Scale
// set from s, which must list exactly the learned features, in order, each
// with a finite mean and a positive scale. The task's Hash does not change:
// it names the definition, the scaling travels with the model.
func (t Task) WithScaling(s []LearnedScaling) (Task, error) {
	idx := t.learned()
	if len(s) != len(idx) {
		return Task{}, fmt.Errorf("%w: %d learned scalings for %d learned features", ErrTask, len(s), len(idx))
	}
	out := t
	out.Features = slices.Clone(t.Features)
	for k, i := range idx {
		f := &out.Features[i]
		if s[k].Name != f.Name || !finite(s[k].Mean) || !(s[k].Scale > 0) || !finite(s[k].Scale) {
			return Task{}, fmt.Errorf("%w: learned scaling of feature %q is malformed", ErrTask, f.Name)
		}
		f.Mean, f.Scale = s[k].Mean, s[k].Scale
	}
	return out, nil
}

// scaled reports whether every feature has its scale (a learned one once
// WithScaling set it).
func (t Task) scaled() bool {
	for _, f := range t.Features {
		if !(f.Scale > 0) {
			return false
		}
	}
	return true
}

// Labels maps record.Diagnosis values to the label: Positive/Negative for
// logistic regression, Classes for softmax. A record whose diagnosis is none
// of them is not used for training or evaluation.
type Labels struct {
	Positive string `json:"positive,omitempty"`
	Negative string `json:"negative,omitempty"`
	// Classes, for the "softmax" model, lists the diagnosis values of the
	// classes in label order (Positive and Negative are then unused).
	Classes []string `json:"classes,omitempty"`
}

// ModelSpec names the model type and its hyper-parameters.
type ModelSpec struct {
	Type string  `json:"type"` // "logistic_regression" or "softmax"
	L2   float64 `json:"l2"`   // L2 regularisation strength (not applied to the bias)
}

// TrainingSpec is the local training every participant runs in a round.
type TrainingSpec struct {
	Epochs       int     `json:"epochs"`
	LearningRate float64 `json:"learning_rate"`
	BatchSize    int     `json:"batch_size"` // 0: full batch
}

// Task is the diagnosis task that federated training learns. Coordinator
// and participants must hold the same Task; its Hash travels with each round.
type Task struct {
	Name          string       `json:"name"`
	Features      []Feature    `json:"features"`
	Labels        Labels       `json:"labels"`
	Model         ModelSpec    `json:"model"`
	Training      TrainingSpec `json:"training"`
	ReferenceDate string       `json:"reference_date"` // YYYY-MM-DD, for derived ages
	ClampZ        float64      `json:"clamp_z"`
}

// DefaultTask is the built-in diagnosis task: a positive/negative diagnosis
// from glucose (mg/dL), BMI, age (years) and systolic blood pressure (mmHg),
// by L2-regularised logistic regression. Means and scales are population
// reference values, not fitted to any data set.
func DefaultTask() Task {
	return Task{
		Name: "diagnosis/v1",
		Features: []Feature{
			{Name: "glucose", Mean: 120, Scale: 30},
			{Name: "bmi", Mean: 28, Scale: 6},
			{Name: "age", Mean: 50, Scale: 15},
			{Name: "systolic_bp", Mean: 125, Scale: 15},
		},
		Labels:        Labels{Positive: "positive", Negative: "negative"},
		Model:         ModelSpec{Type: "logistic_regression", L2: 1e-3},
		Training:      TrainingSpec{Epochs: 10, LearningRate: 0.5},
		ReferenceDate: "2026-01-01",
		ClampZ:        5,
	}
}

// Validate checks the configuration.
func (t Task) Validate() error {
	if len(t.Features) == 0 {
		return fmt.Errorf("%w: no features", ErrTask)
	}
	seen := map[string]bool{}
	for _, f := range t.Features {
		if f.Name == "" || seen[f.Name] {
			return fmt.Errorf("%w: feature name %q empty or repeated", ErrTask, f.Name)
		}
		seen[f.Name] = true
		if f.Learned {
			if !finite(f.Min) || !finite(f.Max) || !(f.Min < f.Max) || !finite(f.Max-f.Min) {
				return fmt.Errorf("%w: learned feature %q needs a finite range min < max", ErrTask, f.Name)
			}
			if f.Mean == 0 && f.Scale == 0 {
				continue // not learned yet
			}
		} else if f.Min != 0 || f.Max != 0 {
			return fmt.Errorf("%w: feature %q: a range is for learned features", ErrTask, f.Name)
		}
		if !(f.Scale > 0) || math.IsInf(f.Scale, 0) || math.IsNaN(f.Mean) || math.IsInf(f.Mean, 0) {
			return fmt.Errorf("%w: feature %q needs a finite mean and a positive scale", ErrTask, f.Name)
		}
	}
	if t.Model.Type == "softmax" {
		classes := map[string]bool{}
		for _, c := range t.Labels.Classes {
			if c == "" || classes[c] {
				return fmt.Errorf("%w: class %q empty or repeated", ErrTask, c)
			}
			classes[c] = true
		}
		if len(classes) < 2 {
			return fmt.Errorf("%w: softmax needs at least two classes", ErrTask)
		}
	} else if t.Labels.Positive == "" || t.Labels.Negative == "" || t.Labels.Positive == t.Labels.Negative {
		return fmt.Errorf("%w: two distinct label values are required", ErrTask)
	}
	if t.Training.Epochs < 1 || !(t.Training.LearningRate > 0) || t.Training.BatchSize < 0 {
		return fmt.Errorf("%w: training needs epochs >= 1 and a positive learning rate", ErrTask)
	}
	if !(t.ClampZ > 0) {
		return fmt.Errorf("%w: clamp_z must be positive", ErrTask)
	}
	if _, err := time.Parse(record.DateLayout, t.ReferenceDate); err != nil {
		return fmt.Errorf("%w: reference_date must be YYYY-MM-DD", ErrTask)
	}
	if _, err := t.NewModel(); err != nil {
		return err
	}
	return nil
}

// NewModel builds the task's model.
func (t Task) NewModel() (Model, error) {
	switch t.Model.Type {
	case "logistic_regression":
		return NewLogisticRegression(len(t.Features), t.Model.L2)
	case "softmax":
		return NewSoftmax(len(t.Features), len(t.Labels.Classes), t.Model.L2)
	default:
		return nil, fmt.Errorf("%w: unknown model type %q", ErrTask, t.Model.Type)
	}
}

// Hash is the SHA-256 (hex) of the task's JSON encoding; participants refuse
// a round announced for another task.
func (t Task) Hash() string {
	b, _ := json.Marshal(t) // a struct of plain fields always marshals
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Dataset is a standardized design matrix with labels (1/0, or class indices).
type Dataset struct {
	X [][]float64
	Y []float64
}

// Len is the number of examples.
func (d Dataset) Len() int { return len(d.Y) }

// Examples turns records into standardized examples. Records without a
// usable label are skipped; the number skipped is returned. A task with a
// learned feature whose scaling is not set yet (WithScaling) is refused.
func (t Task) Examples(records []*record.Record) (Dataset, int, error) {
	raw, skipped, err := t.rawExamples(records)
	if err != nil {
		return Dataset{}, 0, err
	}
	d, err := t.standardize(raw)
	return d, skipped, err
}

// rawExamples reads the labelled records' raw feature values (NaN when
// missing; a learned feature's clipped to its range), not standardized.
func (t Task) rawExamples(records []*record.Record) (Dataset, int, error) {
	ref, err := time.Parse(record.DateLayout, t.ReferenceDate)
	if err != nil {
		return Dataset{}, 0, fmt.Errorf("%w: reference_date", ErrTask)
	}
	var d Dataset
	skipped := 0
	for _, r := range records {
		y, ok := t.label(r.Diagnosis)
		if !ok {
			skipped++
			continue
		}
		x := make([]float64, len(t.Features))
		for i, f := range t.Features {
			v, ok := r.Observations[f.Name]
			if !ok && f.Name == "age" && r.BirthDate != "" {
				v, ok = ageAt(r.BirthDate, ref)
			}
			switch {
			case !ok || math.IsNaN(v) || math.IsInf(v, 0):
				v = math.NaN() // missing: imputed as the mean
			case f.Learned:
				v = math.Max(f.Min, math.Min(f.Max, v))
			}
			x[i] = v
		}
		d.X = append(d.X, x)
		d.Y = append(d.Y, y)
	}
	return d, skipped, nil
}

// standardize turns raw values into z-scores clamped to ClampZ, a missing
// value (NaN) into 0.
func (t Task) standardize(raw Dataset) (Dataset, error) {
	if !t.scaled() {
		return Dataset{}, fmt.Errorf("%w: the learned features' scaling is not known yet (a statistics round learns it)", ErrTask)
	}
	d := Dataset{X: make([][]float64, len(raw.X)), Y: slices.Clone(raw.Y)}
	for k, row := range raw.X {
		x := make([]float64, len(row))
		for i, v := range row {
			if math.IsNaN(v) {
				continue
			}
			f := t.Features[i]
			x[i] = math.Max(-t.ClampZ, math.Min(t.ClampZ, (v-f.Mean)/f.Scale))
		}
		d.X[k] = x
	}
	return d, nil
}

func ageAt(birth string, ref time.Time) (float64, bool) {
	b, err := time.Parse(record.DateLayout, birth)
	if err != nil || b.After(ref) {
		return 0, false
	}
	age := ref.Year() - b.Year()
	if ref.YearDay() < b.YearDay() {
		age--
	}
	return float64(age), true
}

// SplitHeldOut divides records deterministically into a training part and a
// held-out part of about heldOut (0..1) of them, by SHA-256 of patient_id: a
// record stays on the same side in every round and every run.
func SplitHeldOut(records []*record.Record, heldOut float64) (train, test []*record.Record) {
	for _, r := range records {
		h := sha256.Sum256([]byte("healthagents/federated/holdout/" + r.PatientID))
		u := float64(uint64(h[0])<<8|uint64(h[1])) / 65536
		if u < heldOut {
			test = append(test, r)
		} else {
			train = append(train, r)
		}
	}
	return train, test
}

// label maps a diagnosis to the model's label: 1/0 for a binary task, the
// class index for softmax; false when the record has no usable label.
func (t Task) label(diagnosis string) (float64, bool) {
	if t.Model.Type == "softmax" {
		for i, c := range t.Labels.Classes {
			if c == diagnosis {
				return float64(i), true
			}
		}
		return 0, false
	}
	switch diagnosis {
	case t.Labels.Positive:
		return 1, true
	case t.Labels.Negative:
		return 0, true
	}
	return 0, false
}
