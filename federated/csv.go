package federated

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/healthagents/healthagents/record"
)

// MaxCSVRows bounds the records ReadCSV returns.
const MaxCSVRows = 1 << 22

// ReadCSV reads a participant's records from CSV with a header row: each
// feature from its column (a number; empty or "NA" is missing and imputed),
// the label from the label column, and the patient id from "patient_id"
// when present (it fixes the held-out split; without it the row number
// does). Errors name the line and column but never echo a value.
func (tf *TaskFile) ReadCSV(r io.Reader) ([]*record.Record, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: csv header: %w", ErrTask, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	feat := make([]int, len(tf.Features))
	for i, f := range tf.Features {
		c, ok := col[f.Column]
		if !ok {
			return nil, fmt.Errorf("%w: csv has no column %q for feature %q", ErrTask, f.Column, f.Name)
		}
		feat[i] = c
	}
	label, ok := col[tf.Label.Column]
	if !ok {
		return nil, fmt.Errorf("%w: csv has no label column %q", ErrTask, tf.Label.Column)
	}
	id, hasID := col["patient_id"]
	var out []*record.Record
	for line := 2; ; line++ {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: csv line %d: malformed row", ErrTask, line)
		}
		if len(out) >= MaxCSVRows {
			return nil, fmt.Errorf("%w: csv has more than %d rows", ErrTask, MaxCSVRows)
		}
		rec := &record.Record{PatientID: "row-" + strconv.Itoa(line-1), Diagnosis: strings.TrimSpace(row[label]), Observations: map[string]float64{}}
		if hasID {
			rec.PatientID = strings.TrimSpace(row[id])
		}
		for i, f := range tf.Features {
			v := strings.TrimSpace(row[feat[i]])
			if v == "" || strings.EqualFold(v, "NA") {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(x) {
				return nil, fmt.Errorf("%w: csv line %d, column %q: not a finite number", ErrTask, line, f.Column)
			}
			rec.Observations[f.Name] = x
		}
		out = append(out, rec)
	}
}
