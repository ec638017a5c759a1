package x12

import "time"

// Inquiry is a read 270 interchange (Read270): who sent it to whom, and
// what each of its transaction sets asks.
type Inquiry struct {
	Envelope Envelope
	// ApplicationSender and ApplicationReceiver are GS02 and GS03 of the
	// first functional group.
	ApplicationSender, ApplicationReceiver string
	Transactions                           []*Transaction270
}

// Transaction270 is one 270 transaction set.
type Transaction270 struct {
	// Control is ST02; Reference is BHT03 (the submitter's transaction
	// identifier), echoed in the 271's BHT03.
	Control, Reference string
	Sources            []*Source
}

// Party is a loop's NM1: entity identifier code (NM101), entity type
// (NM102), last or organization name (NM103), first name (NM104), id
// qualifier (NM108) and id (NM109). Values are trimmed.
type Party struct {
	Entity, EntityType, LastName, FirstName, IDQualifier, ID string
}

// Source is loop 2000A: the information source asked (the payer), and the
// receivers asking it.
type Source struct {
	Party
	Receivers []*Receiver
}

// Receiver is loop 2000B: the information receiver (the provider), and the
// subscribers it asks about.
type Receiver struct {
	Party
	Subscribers []*Subscriber
}

// Subscriber is loop 2000C, with its dependents (2000D). Party.ID is the
// member id when Party.IDQualifier is MI.
type Subscriber struct {
	Member
	Dependents []*Member
}

// Member is what a 270 says of the patient at one level (2000C or 2000D):
// the traces to echo, the name and id, the birth date, the date of
// service asked about, and the benefit inquiries (EQ).
type Member struct {
	Traces []Trace
	Party
	// BirthDate is DMG02 (CCYYMMDD), zero when absent.
	BirthDate time.Time
	// ServiceDate is the loop's DTP*291, nil when absent.
	ServiceDate *Period
	Inquiries   []*BenefitInquiry
}

// Trace is a TRN of the 270 (trace type 1), echoed in the 271 as trace
// type 2 (referenced transaction trace number).
type Trace struct {
	// Number is TRN02, Originator TRN03 (ten characters), Additional TRN04.
	Number, Originator, Additional string
}

// BenefitInquiry is one EQ loop (2110C/2110D): service types (EQ01,
// repeated) or a procedure (EQ02), and the EQ loop's own DTP*291.
type BenefitInquiry struct {
	ServiceTypes []string
	// ProcedureQualifier and ProcedureCode are EQ02-1 and EQ02-2 (HC:70551).
	ProcedureQualifier, ProcedureCode string
	ServiceDate                       *Period
}

// Period is a DTP date (D8: From equals To) or range (RD8).
type Period struct{ From, To time.Time }

// Subscribers returns every subscriber of the transaction set, in order.
func (t *Transaction270) Subscribers() []*Subscriber {
	var out []*Subscriber
	for _, s := range t.Sources {
		for _, r := range s.Receivers {
			out = append(out, r.Subscribers...)
		}
	}
	return out
}
