package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// sealNotes says what a record that passed record.Validate (our record
// JSON, or a FHIR Bundle mapped by fhir.Map, src then saying where each
// entry came from) still lacks for the decisions it will be sent to, and
// what in it the service will ignore or cannot interpret: no coverage,
// coverage that does not cover today, medications and allergies the drug
// catalogue cannot identify (prescriptions will need review), fields that
// are not record fields (a typo such as "conditons" would otherwise
// silently drop a patient's conditions). They are notes, not errors: such
// a record is still well formed, and `healthagents seal` seals it,
// printing them to standard error. A note names a field or a Bundle entry,
// never a value of the record.
func sealNotes(plaintext []byte, rec *record.Record, src *fhir.Sources, today time.Time, drugs *prescription.Agent) []string {
	var notes []string
	where := func(field string, paths []string, i int) string {
		if src == nil {
			return fmt.Sprintf("%s[%d]", field, i)
		}
		return paths[i]
	}
	coverage := "coverage"
	if src == nil {
		var top map[string]json.RawMessage
		if json.Unmarshal(plaintext, &top) == nil {
			notes = append(notes, unknownFields("", top, reflect.TypeFor[record.Record]())...)
			var cov map[string]json.RawMessage
			if raw, ok := top["coverage"]; ok && json.Unmarshal(raw, &cov) == nil {
				notes = append(notes, unknownFields("coverage.", cov, reflect.TypeFor[record.Coverage]())...)
			}
		}
	} else {
		coverage = src.Coverage
	}
	switch c := rec.Coverage; {
	case c == nil && src != nil:
		notes = append(notes, "no Coverage resource: every eligibility check will answer not eligible (no insurance); add the patient's Coverage with its status, period and subscriberId")
	case c == nil:
		notes = append(notes, "no 'coverage': every eligibility check will answer not eligible (no insurance); add coverage.member_id, status, start and end")
	case c.Status != record.StatusActive:
		notes = append(notes, fmt.Sprintf("%s.status is %q: eligibility checks will answer not eligible", coverage, c.Status))
	default:
		start, end := c.Window()
		day := today.UTC().Truncate(24 * time.Hour)
		if day.Before(start) || day.After(end) {
			notes = append(notes, fmt.Sprintf("%s runs %s to %s, which does not include today (%s): eligibility checks will answer not eligible",
				coverage, c.Start, c.End, day.Format(record.DateLayout)))
		}
	}
	if drugs == nil {
		return notes
	}
	var medPaths, allergyPaths []string
	if src != nil {
		medPaths, allergyPaths = src.Medications, src.Allergies
	}
	for i, m := range rec.Medications {
		if _, ok := drugs.Identify(m); !ok {
			notes = append(notes, where("medications", medPaths, i)+" is not in the drug catalogue (no RxNorm ingredient, product or NDC it knows, and no readable drug name): interactions with it cannot be checked, so every prescription for this patient will need review")
		}
	}
	for i, a := range rec.Allergies {
		if len(drugs.Facts(&record.Record{Allergies: []string{a}}, nil).Unidentified) > 0 {
			notes = append(notes, where("allergies", allergyPaths, i)+" names no allergen the rules know, no catalogue drug and no known food or environment allergen: every prescription for this patient will need review")
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
