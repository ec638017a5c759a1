package federated

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
)

// TaskFile is a task as an operator writes it (JSON, loaded from the file
// FEDERATED_TASK names). Every participant and the coordinator load the
// same file; Task() turns it into the Task whose Hash travels with rounds.
type TaskFile struct {
	// ID names the task among several run side by side (letters, digits,
	// '-', '_', '.', '/'; at most 64).
	ID       string        `json:"id"`
	Features []FeatureSpec `json:"features"`
	Label    LabelSpec     `json:"label"`
	Model    ModelSpec     `json:"model"`
	// LearningRate, LocalEpochs and BatchSize (0: full batch) drive each
	// participant's local training.
	LearningRate float64 `json:"learning_rate"`
	LocalEpochs  int     `json:"local_epochs"`
	BatchSize    int     `json:"batch_size,omitempty"`
	// HeldOut is the fraction of each participant's records kept for
	// evaluation (default 0.2).
	HeldOut       float64 `json:"held_out,omitempty"`
	ReferenceDate string  `json:"reference_date,omitempty"` // default 2026-01-01
	ClampZ        float64 `json:"clamp_z,omitempty"`        // default 5
	// Missing says what an empty or "NA" cell of a participant's CSV means:
	// "refuse" (the default: the participant refuses to start until the
	// data is complete), "mean" (imputed as the feature's mean) or "zero"
	// (the raw value 0). It is how participants read their data, not part
	// of the task's hash.
	Missing string `json:"missing,omitempty"`
}

// FeatureSpec is one feature of a task file: where its value is read and how
// it is scaled.
type FeatureSpec struct {
	Name string `json:"name"`
	// Column is the CSV column (default Name); records are read by the
	// observation of that name, "age" falling back to the birth date.
	Column string `json:"column,omitempty"`
	// Scaling is "given" (Mean and Scale below; the default) or "learned":
	// before the first training round a statistics round learns the mean
	// and scale from a secure sum of every participant's count, sum and
	// sum of squares of the feature's training values (Mean and Scale are
	// then left out).
	Scaling string  `json:"scaling,omitempty"`
	Mean    float64 `json:"mean,omitempty"`
	Scale   float64 `json:"scale,omitempty"`
	// Range [min, max] is required with "learned": every raw value is
	// clipped to it, for the statistics and for training alike, so that no
	// participant's sums can exceed what the fixed-point encoding holds.
	Range []float64 `json:"range,omitempty"`
}

// LabelSpec names the label and its values: a record whose label is one of
// Positive is a positive example, one of Negative a negative one, anything
// else is not used.
type LabelSpec struct {
	// Column is the CSV column of the label (default "diagnosis"); records
	// carry it as their diagnosis.
	Column   string `json:"column,omitempty"`
	Positive string `json:"positive,omitempty"`
	Negative string `json:"negative,omitempty"`
	// Classes are the label values of a "softmax" model, in class order.
	Classes []string `json:"classes,omitempty"`
}

var taskIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$`)

// ParseTaskFile decodes and validates a task file. Unknown fields are
// refused, so a misspelt setting is not silently ignored. Errors are one
// line naming the field.
func ParseTaskFile(r io.Reader) (*TaskFile, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	var tf TaskFile
	if err := dec.Decode(&tf); err != nil {
		return nil, fmt.Errorf("%w: task file: %w", ErrTask, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: task file: trailing data after the task", ErrTask)
	}
	if err := tf.Validate(); err != nil {
		return nil, err
	}
	return &tf, nil
}

// ParseTaskFileBytes is ParseTaskFile over b.
func ParseTaskFileBytes(b []byte) (*TaskFile, error) { return ParseTaskFile(bytes.NewReader(b)) }

func (tf *TaskFile) fill() {
	if tf.HeldOut == 0 {
		tf.HeldOut = 0.2
	}
	if tf.ReferenceDate == "" {
		tf.ReferenceDate = DefaultTask().ReferenceDate
	}
	if tf.Label.Column == "" {
		tf.Label.Column = "diagnosis"
	}
	if tf.ClampZ == 0 {
		tf.ClampZ = DefaultTask().ClampZ
	}
	for i := range tf.Features {
		f := &tf.Features[i]
		if f.Column == "" {
			f.Column = f.Name
		}
		if f.Scaling == "" {
			f.Scaling = "given"
		}
	}
}

// Validate fills defaults and checks the file; the error names the field.
func (tf *TaskFile) Validate() error {
	tf.fill()
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("%w: task file: %s %s", ErrTask, field, fmt.Sprintf(format, a...))
	}
	if !taskIDPattern.MatchString(tf.ID) {
		return bad("id", "must be 1-64 letters, digits, '.', '_', '-' or '/', starting with a letter or digit")
	}
	if len(tf.Features) == 0 {
		return bad("features", "must list at least one feature")
	}
	seen := map[string]bool{}
	for i, f := range tf.Features {
		field := fmt.Sprintf("features[%d]", i)
		switch {
		case f.Name == "" || seen[f.Name]:
			return bad(field+".name", "%q is empty or repeated", f.Name)
		case f.Scaling == "learned":
			switch {
			case len(f.Range) != 2 || !finite(f.Range[0]) || !finite(f.Range[1]) || !(f.Range[0] < f.Range[1]) || !finite(f.Range[1]-f.Range[0]):
				return bad(field+".range", "must be [min, max], two finite numbers with min < max, for a \"learned\" feature")
			case f.Mean != 0 || f.Scale != 0:
				return bad(field+".scaling", "\"learned\" takes no mean or scale (the statistics round learns them)")
			}
		case f.Scaling != "given":
			return bad(field+".scaling", "must be \"given\" or \"learned\", not %q", f.Scaling)
		case len(f.Range) != 0:
			return bad(field+".range", "is for \"learned\" features")
		case !finite(f.Mean):
			return bad(field+".mean", "must be a finite number")
		case !(f.Scale > 0) || !finite(f.Scale):
			return bad(field+".scale", "must be a positive number")
		}
		seen[f.Name] = true
	}
	softmax := tf.Model.Type == "softmax"
	classes := map[string]bool{}
	for _, c := range tf.Label.Classes {
		if c == "" || classes[c] {
			return bad("label.classes", "%q is empty or repeated", c)
		}
		classes[c] = true
	}
	switch {
	case tf.Model.Type != "logistic_regression" && !softmax:
		return bad("model.type", "must be \"logistic_regression\" or \"softmax\", not %q", tf.Model.Type)
	case softmax && len(classes) < 2:
		return bad("label.classes", "must list at least two values for \"softmax\"")
	case softmax && (tf.Label.Positive != "" || tf.Label.Negative != ""):
		return bad("label", "positive/negative are for \"logistic_regression\"; \"softmax\" takes classes")
	case !softmax && len(classes) > 0:
		return bad("label.classes", "are for \"softmax\"; \"logistic_regression\" takes positive and negative")
	case !softmax && (tf.Label.Positive == "" || tf.Label.Negative == "" || tf.Label.Positive == tf.Label.Negative):
		return bad("label", "needs two distinct values, positive and negative")
	case !(tf.Model.L2 >= 0) || !finite(tf.Model.L2):
		return bad("model.l2", "must be a non-negative number")
	case !(tf.LearningRate > 0) || !finite(tf.LearningRate):
		return bad("learning_rate", "must be a positive number")
	case tf.LocalEpochs < 1 || tf.LocalEpochs > 1000:
		return bad("local_epochs", "must be 1..1000")
	case tf.BatchSize < 0:
		return bad("batch_size", "must not be negative")
	case !(tf.HeldOut > 0 && tf.HeldOut < 1):
		return bad("held_out", "must be in (0, 1)")
	case !(tf.ClampZ > 0) || !finite(tf.ClampZ):
		return bad("clamp_z", "must be a positive number")
	case tf.Missing != "" && tf.Missing != MissingRefuse && tf.Missing != MissingMean && tf.Missing != MissingZero:
		return bad("missing", "must be \"refuse\", \"mean\" or \"zero\", not %q", tf.Missing)
	}
	if err := tf.Task().Validate(); err != nil {
		return err
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Task is the file's task. Feature columns only say where a participant's
// reader finds a value: the task (and its hash) names features by Name.
func (tf *TaskFile) Task() Task {
	t := Task{
		Name: tf.ID, Labels: Labels{Positive: tf.Label.Positive, Negative: tf.Label.Negative, Classes: tf.Label.Classes},
		Model:         tf.Model,
		Training:      TrainingSpec{Epochs: tf.LocalEpochs, LearningRate: tf.LearningRate, BatchSize: tf.BatchSize},
		ReferenceDate: tf.ReferenceDate, ClampZ: tf.ClampZ,
	}
	for _, f := range tf.Features {
		ft := Feature{Name: f.Name, Mean: f.Mean, Scale: f.Scale}
		if f.Scaling == "learned" && len(f.Range) == 2 {
			ft.Learned, ft.Min, ft.Max = true, f.Range[0], f.Range[1]
		}
		t.Features = append(t.Features, ft)
	}
	return t
}
