package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// sealNotes says what a record that passed record.Validate still lacks for
// the decisions it will be sent to, and what in it the service will ignore:
// no coverage, coverage that does not cover today, medications the drug
// catalogue does not know, fields that are not record fields (a typo such
// as "conditons" would otherwise silently drop a patient's conditions).
// They are notes, not errors: such a record is still well formed, and
// `healthagents seal` seals it, printing them to standard error.
func sealNotes(plaintext []byte, rec *record.Record, today time.Time, drugs *prescription.Agent) []string {
	var notes []string
	if bytes.Contains(plaintext, []byte(`"resourceType"`)) {
		return nil // a FHIR Bundle: fhir.Parse names what it lacks
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(plaintext, &top) == nil {
		notes = append(notes, unknownFields("", top, reflect.TypeFor[record.Record]())...)
		var cov map[string]json.RawMessage
		if raw, ok := top["coverage"]; ok && json.Unmarshal(raw, &cov) == nil {
			notes = append(notes, unknownFields("coverage.", cov, reflect.TypeFor[record.Coverage]())...)
		}
	}
	switch c := rec.Coverage; {
	case c == nil:
		notes = append(notes, "no 'coverage': every eligibility check will answer not eligible (no insurance); add coverage.member_id, status, start and end")
	case c.Status != record.StatusActive:
		notes = append(notes, fmt.Sprintf("coverage.status is %q: eligibility checks will answer not eligible", c.Status))
	default:
		start, end := c.Window()
		day := today.UTC().Truncate(24 * time.Hour)
		if day.Before(start) || day.After(end) {
			notes = append(notes, fmt.Sprintf("coverage runs %s to %s, which does not include today (%s): eligibility checks will answer not eligible",
				c.Start, c.End, day.Format(record.DateLayout)))
		}
	}
	if drugs != nil {
		for i, m := range rec.Medications {
			if _, err := drugs.Lookup(m); err != nil {
				notes = append(notes, fmt.Sprintf("medications[%d] is not in the drug catalogue (an RxNorm RxCUI, an NDC or a drug name): interactions with it cannot be checked", i))
			}
		}
	}
	return notes
}

// unknownFields names the keys of obj that are no JSON field of t.
func unknownFields(prefix string, obj map[string]json.RawMessage, t reflect.Type) []string {
	known := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			known[name] = true
		}
	}
	var notes []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !known[k] {
			notes = append(notes, fmt.Sprintf("'%s%s' is not a record field: the service ignores it (docs/record.schema.json lists the fields)", prefix, k))
		}
	}
	return notes
}
