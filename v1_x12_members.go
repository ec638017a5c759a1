package healthagents

// Who is the subscriber of an X12 270: a registered patient found by
// payer, member id, and name or birth date, through a keyed index
// (docs/x12.md, "Who is the subscriber").

import (
	"context"
	"strings"
	"time"

	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/x12"
)

// The kinds of MemberKey.
const (
	MemberKeyName  = "name"  // payer, member id, family and given name
	MemberKeyBirth = "birth" // payer, member id, birth date
)

// MemberKey is one way a registered patient can be found: its kind and the
// canonical text that names the patient that way. A MemberIndex stores
// only a keyed hash of the text, never the text.
type MemberKey struct {
	Kind, Text string
}

// MemberMatch is a patient FindMembers found: the kinds of the keys that
// matched, and the kinds the patient is indexed under at all.
type MemberMatch struct {
	PatientID string
	Matched   []string
	Indexed   []string
}

// MemberIndex finds the patients an owner registered from what an X12 270
// names: payer, member id, and name or birth date. *store.PatientStore is
// one; V1 uses it when the PatientRegistry is one, or the one
// WithMemberIndex gives.
type MemberIndex interface {
	// IndexMember replaces the keys under which the owner's patient is
	// found. dataHash is the data_hash of the envelope the keys were read
	// from: a key whose envelope has been replaced or deleted since finds
	// nothing.
	IndexMember(ctx context.Context, owner, patientID, dataHash string, keys []MemberKey) error
	// FindMembers returns the owner's patients indexed under any of keys,
	// whose registered envelope is still the one the key was read from.
	FindMembers(ctx context.Context, owner string, keys []MemberKey) ([]MemberMatch, error)
}

// WithMemberIndex sets the index that finds an X12 270's members (by
// default the PatientRegistry, if it is a MemberIndex). Registering a
// patient fills it.
func WithMemberIndex(idx MemberIndex) V1Option {
	return func(v *V1) error { v.members = idx; return nil }
}

// memberKeys are the keys a registered record is found by: payer and
// member id (coverage.payer_id, coverage.member_id) with the name, and
// with the birth date. A record without a payer or member id has none.
func memberKeys(rec *record.Record) []MemberKey {
	if rec.Coverage == nil || strings.TrimSpace(rec.Coverage.PayerID) == "" || rec.Coverage.MemberID == "" {
		return nil
	}
	var family, given string
	if rec.Name != nil {
		family, given = rec.Name.Family, rec.Name.Given
	}
	var birth time.Time
	if rec.BirthDate != "" {
		birth, _ = time.Parse(record.DateLayout, rec.BirthDate) // Parse checked it
	}
	return lookupKeys(rec.Coverage.PayerID, rec.Coverage.MemberID, family, given, birth)
}

// lookupKeys are the keys of a payer, a member id and what else is known:
// a name (family and given, both) and a birth date.
func lookupKeys(payer, memberID, family, given string, birth time.Time) []MemberKey {
	base := strings.ToUpper(strings.TrimSpace(payer)) + "\x1f" + strings.TrimSpace(memberID)
	var keys []MemberKey
	if f, g := x12.FoldName(family), x12.FoldName(given); f != "" && g != "" {
		keys = append(keys, MemberKey{Kind: MemberKeyName, Text: "v1\x1f" + base + "\x1f" + f + "\x1f" + g})
	}
	if !birth.IsZero() {
		keys = append(keys, MemberKey{Kind: MemberKeyBirth, Text: "v1\x1f" + base + "\x1f" + birth.Format(record.DateLayout)})
	}
	return keys
}

// indexPatient fills the member index for a registered record.
func (v *V1) indexPatient(ctx context.Context, owner, patientID, dataHash string, rec *record.Record) error {
	if v.members == nil {
		return nil
	}
	return v.members.IndexMember(ctx, owner, patientID, dataHash, memberKeys(rec))
}

// memberFind is the outcome of looking a 270's member up.
type memberFind struct {
	patientID string
	// valid is AAA01: whether the 270 asked properly (a member id, a name
	// or a birth date) and was answered no.
	valid bool
	// reason is the AAA03 code when no single patient was found: 75 (67
	// for a dependent) not found, 71 birth date, 73 (65) name
	// contradicted, 76 (68) more than one, 72 no member id, 42 the index
	// could not be read.
	reason string
}

// findMember finds the owner's patient a 270 names: member id and name or
// birth date must both match a registered record's keys (under the 270's
// payer), and no element the 270 gives may contradict what the record
// holds. dependent selects the 2100D reason codes.
func (v *V1) findMember(ctx context.Context, owner, payer, memberID string, m *x12.Member, dependent bool) memberFind {
	notFound, nameCode, dup := "75", "73", "76"
	if dependent {
		notFound, nameCode, dup = "67", "65", "68"
	}
	if memberID == "" {
		if dependent {
			return memberFind{reason: notFound, valid: true}
		}
		return memberFind{reason: "72"}
	}
	keys := lookupKeys(payer, memberID, m.LastName, m.FirstName, m.BirthDate)
	if len(keys) == 0 {
		return memberFind{reason: nameCode} // neither a full name nor a birth date
	}
	if v.members == nil {
		return memberFind{reason: notFound, valid: true}
	}
	matches, err := v.members.FindMembers(ctx, owner, keys)
	if err != nil {
		v.svc.logError(ctx, "member index failed", "err", err)
		return memberFind{reason: "42"}
	}
	var found []string
	contradicted := ""
	for _, mm := range matches {
		ok := len(mm.Matched) > 0
		for _, k := range keys {
			if !contains(mm.Matched, k.Kind) && contains(mm.Indexed, k.Kind) {
				ok = false // the 270 says otherwise than the record
				if contradicted == "" || k.Kind == MemberKeyBirth {
					contradicted = k.Kind
				}
			}
		}
		if ok && !contains(found, mm.PatientID) {
			found = append(found, mm.PatientID)
		}
	}
	switch {
	case len(found) == 1:
		return memberFind{patientID: found[0]}
	case len(found) > 1:
		return memberFind{reason: dup, valid: true}
	case contradicted == MemberKeyBirth:
		return memberFind{reason: "71", valid: true}
	case contradicted == MemberKeyName:
		return memberFind{reason: nameCode, valid: true}
	}
	return memberFind{reason: notFound, valid: true}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
