package federated

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/healthagents/healthagents/record"
)

// MaxCSVRows bounds the records ReadCSV returns.
const MaxCSVRows = 1 << 22

// What a task file's "missing" says an empty or "NA" cell means.
const (
	MissingRefuse = "refuse" // the default: the data is refused until it is complete
	MissingMean   = "mean"   // imputed as the feature's mean (z = 0)
	MissingZero   = "zero"   // the raw value 0
)

// DefaultMaxUnusable is the share of rows ReadCSV accepts leaving out
// (a label the task does not know, or an empty cell under "refuse")
// before it refuses the data.
const DefaultMaxUnusable = 0.05

// CSVReport says what ReadCSVReport did with each row: how many it read,
// used and skipped and why, and what it imputed. It holds no cell value
// but the label values the task does not know, which it lists (at most
// maxListed, each cut to 32 characters) for the participant's own operator.
type CSVReport struct {
	Read, Used int
	// UnknownLabel counts the rows whose label value is none of the task's;
	// UnknownValues are those values (distinct, sorted), TaskValues the
	// task's.
	UnknownLabel  int
	UnknownValues []string
	TaskValues    []string
	// MissingCells counts the empty or "NA" feature cells of the rows with
	// a known label; under "refuse" their rows are skipped (MissingRows) and
	// Where names the first few (line and column), otherwise they are
	// imputed as Missing says.
	Missing      string
	MissingCells int
	MissingRows  int
	Where        []string
}

const maxListed = 10

// Skipped is the rows left out.
func (r CSVReport) Skipped() int { return r.UnknownLabel + r.MissingRows }

// String is the report in one line, as the participant prints it before
// its first round.
func (r CSVReport) String() string {
	s := fmt.Sprintf("data: %d rows read, %d used, %d skipped", r.Read, r.Used, r.Skipped())
	var why []string
	if r.UnknownLabel > 0 {
		why = append(why, fmt.Sprintf("%d with a label value the task does not know (%s; the task's: %s)", r.UnknownLabel, quoteAll(r.UnknownValues), quoteAll(r.TaskValues)))
	}
	if r.MissingRows > 0 {
		why = append(why, fmt.Sprintf("%d with an empty cell (%s) while the task file says missing: refuse", r.MissingRows, strings.Join(r.Where, ", ")))
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	switch {
	case r.MissingCells > 0 && r.Missing == MissingMean:
		s += fmt.Sprintf("; %d empty cells imputed as the feature's mean (missing: mean)", r.MissingCells)
	case r.MissingCells > 0 && r.Missing == MissingZero:
		s += fmt.Sprintf("; %d empty cells read as 0 (missing: zero)", r.MissingCells)
	}
	return s
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// Check refuses the data (ErrTask, with the report) when a cell is empty
// under "refuse", or when more than maxUnusable of the rows read (a share,
// 0.05 for 5 %) are left out, or when none is used.
func (r CSVReport) Check(maxUnusable float64) error {
	switch {
	case r.MissingRows > 0:
		return fmt.Errorf("%w: %s: refused: the task file says missing: refuse (say mean or zero to impute, or complete the data)", ErrTask, r)
	case r.Used == 0:
		return fmt.Errorf("%w: %s: refused: no row is usable", ErrTask, r)
	case float64(r.Skipped()) > maxUnusable*float64(r.Read):
		return fmt.Errorf("%w: %s: refused: more than %s%% of the rows are unusable", ErrTask, r, strconv.FormatFloat(100*maxUnusable, 'g', -1, 64))
	}
	return nil
}

// ReadCSV reads a participant's records (ReadCSVReport) and refuses the
// data as CSVReport.Check does with DefaultMaxUnusable.
func (tf *TaskFile) ReadCSV(r io.Reader) ([]*record.Record, error) {
	recs, rep, err := tf.ReadCSVReport(r)
	if err != nil {
		return nil, err
	}
	return recs, rep.Check(DefaultMaxUnusable)
}

// ReadCSVReport reads a participant's records from CSV with a header row:
// each feature from its column (a number; empty or "NA" is missing, and
// the task file's "missing" says what that means), the label from the label
// column, and the patient id from "patient_id" when present (it fixes the
// held-out split; without it the row number does). A row whose label the
// task does not know, or with an empty cell under "refuse", is left out and
// counted in the report; the records are the rows used. Errors name the
// line and column but never echo a value.
func (tf *TaskFile) ReadCSVReport(r io.Reader) ([]*record.Record, CSVReport, error) {
	task := tf.Task()
	rep := CSVReport{Missing: tf.missing(), TaskValues: task.labelValues()}
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, rep, fmt.Errorf("%w: csv header: %w", ErrTask, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	feat := make([]int, len(tf.Features))
	for i, f := range tf.Features {
		c, ok := col[f.Column]
		if !ok {
			return nil, rep, fmt.Errorf("%w: csv has no column %q for feature %q", ErrTask, f.Column, f.Name)
		}
		feat[i] = c
	}
	label, ok := col[tf.Label.Column]
	if !ok {
		return nil, rep, fmt.Errorf("%w: csv has no label column %q", ErrTask, tf.Label.Column)
	}
	id, hasID := col["patient_id"]
	unknown := map[string]bool{}
	var out []*record.Record
	for line := 2; ; line++ {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, rep, fmt.Errorf("%w: csv line %d: malformed row", ErrTask, line)
		}
		if rep.Read >= MaxCSVRows {
			return nil, rep, fmt.Errorf("%w: csv has more than %d rows", ErrTask, MaxCSVRows)
		}
		rep.Read++
		diagnosis := strings.TrimSpace(row[label])
		if _, known := task.label(diagnosis); !known {
			rep.UnknownLabel++
			if len(unknown) < maxListed {
				unknown[cut(diagnosis, 32)] = true
			}
			continue
		}
		rec := &record.Record{PatientID: "row-" + strconv.Itoa(line-1), Diagnosis: diagnosis, Observations: map[string]float64{}}
		if hasID {
			rec.PatientID = strings.TrimSpace(row[id])
		}
		empty := 0
		for i, f := range tf.Features {
			v := strings.TrimSpace(row[feat[i]])
			if v == "" || strings.EqualFold(v, "NA") {
				empty++
				if rep.Missing == MissingRefuse && len(rep.Where) < maxListed {
					rep.Where = append(rep.Where, fmt.Sprintf("line %d column %q", line, f.Column))
				}
				if rep.Missing == MissingZero {
					rec.Observations[f.Name] = 0
				}
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(x) {
				return nil, rep, fmt.Errorf("%w: csv line %d, column %q: not a finite number", ErrTask, line, f.Column)
			}
			rec.Observations[f.Name] = x
		}
		rep.MissingCells += empty
		if empty > 0 && rep.Missing == MissingRefuse {
			rep.MissingRows++
			continue
		}
		out = append(out, rec)
	}
	rep.Used = len(out)
	for v := range unknown {
		rep.UnknownValues = append(rep.UnknownValues, v)
	}
	slices.Sort(rep.UnknownValues)
	return out, rep, nil
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// labelValues are the label values the task knows, in its order.
func (t Task) labelValues() []string {
	if t.Model.Type == "softmax" {
		return slices.Clone(t.Labels.Classes)
	}
	return []string{t.Labels.Positive, t.Labels.Negative}
}

// missing is the file's "missing", default "refuse".
func (tf *TaskFile) missing() string {
	if tf.Missing == "" {
		return MissingRefuse
	}
	return tf.Missing
}
