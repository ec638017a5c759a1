package x12

// Acknowledgments of a 270 that cannot be served as it is: the TA1
// (interchange acknowledgment) and the 999 (implementation
// acknowledgment, 005010X231A1).

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AckVersion is the implementation guide of the 999s RenderAck writes.
const AckVersion = "005010X231A1"

// Reply is the envelope of an answer to a received interchange: its own
// control number (ISA13, also GS06) and time. The answer goes back the way
// the request came: its ISA and GS parties are the request's, swapped,
// and its usage indicator the request's. DefaultSenderID (qualifier ZZ)
// answers a request whose ISA could not be read.
type Reply struct {
	Control         int
	Time            time.Time
	DefaultSenderID string
}

// parties is an answer's ISA/GS addressing.
type parties struct {
	senderQual, sender, receiverQual, receiver string
	appSender, appReceiver                     string
	production                                 bool
}

// answerTo addresses an answer to the interchange env came in (nil: one
// whose ISA could not be read).
func (rp Reply) answerTo(env *Envelope, appSender, appReceiver string) parties {
	if env != nil && !env.addressable() {
		env = nil
	}
	if env == nil {
		id := rp.DefaultSenderID
		if id == "" {
			id = "HEALTHAGENTS"
		}
		return parties{senderQual: "ZZ", sender: id, receiverQual: "ZZ", receiver: "UNKNOWN", appSender: id, appReceiver: "UNKNOWN"}
	}
	p := parties{senderQual: env.ReceiverQualifier, sender: env.ReceiverID, receiverQual: env.SenderQualifier, receiver: env.SenderID,
		appSender: appReceiver, appReceiver: appSender, production: env.Production}
	if p.appSender == "" {
		p.appSender = p.sender
	}
	if p.appReceiver == "" {
		p.appReceiver = p.receiver
	}
	return p
}

// addressable reports whether an answer can be addressed back to the
// envelope's parties: ids and qualifiers of printable characters, none of
// them a separator of the answers.
func (e *Envelope) addressable() bool {
	for _, v := range []string{e.SenderQualifier, e.SenderID, e.ReceiverQualifier, e.ReceiverID} {
		if v == "" || len(v) > 15 || !printable(v) || containsSep(v) {
			return false
		}
	}
	return true
}

func (rp Reply) check() error {
	if rp.Control < 1 || rp.Control > 999999999 {
		return fmt.Errorf("%w: the control number must be 1 to 999999999", ErrInvalid)
	}
	if rp.Time.IsZero() {
		return fmt.Errorf("%w: the reply's time is required", ErrInvalid)
	}
	return nil
}

// isa writes the ISA segment (and the GS when fg is not "").
func (w *writer) header(p parties, ctl int, at time.Time, fg, version string) {
	at = at.UTC()
	usage := "T"
	if p.production {
		usage = "P"
	}
	w.seg("ISA", "00", pad("", 10), "00", pad("", 10), p.senderQual, pad(p.sender, 15), p.receiverQual, pad(p.receiver, 15),
		at.Format("060102"), at.Format("1504"), string(RepetitionSep), "00501", fmt.Sprintf("%09d", ctl), "0", usage, string(SubElementSep))
	if fg != "" {
		w.seg("GS", fg, p.appSender, p.appReceiver, at.Format("20060102"), at.Format("1504"), strconv.Itoa(ctl), "X", version)
	}
}

// trailer writes GE (for groups transaction sets) and IEA.
func (w *writer) trailer(ctl, sets int) {
	if sets > 0 {
		w.seg("GE", strconv.Itoa(sets), strconv.Itoa(ctl))
	}
	groups := "1"
	if sets == 0 {
		groups = "0"
	}
	w.seg("IEA", groups, fmt.Sprintf("%09d", ctl))
}

// startSet writes ST and starts counting; endSet writes SE.
func (w *writer) startSet(id, ctl, version string) {
	w.counting, w.inSet = true, 0
	w.seg("ST", id, ctl, version)
}

func (w *writer) endSet(ctl string) {
	w.seg("SE", strconv.Itoa(w.inSet+1), ctl)
	w.counting = false
}

// AckKind names what RenderAck wrote.
type AckKind string

// The acknowledgments.
const (
	KindTA1 AckKind = "TA1"
	Kind999 AckKind = "999"
)

// RenderAck answers a Read270 error: a TA1 for an *InterchangeError, a 999
// for a *SyntaxError. Any other error is refused.
func RenderAck(err error, rp Reply) ([]byte, AckKind, error) {
	if e := rp.check(); e != nil {
		return nil, "", e
	}
	var ie *InterchangeError
	var se *SyntaxError
	switch {
	case errors.As(err, &ie):
		return renderTA1(ie, rp), KindTA1, nil
	case errors.As(err, &se):
		return render999(se.ic, rp), Kind999, nil
	}
	return nil, "", fmt.Errorf("%w: not an interchange or syntax error", ErrInvalid)
}

// renderTA1 writes ISA, TA1 (the received control number, date and time,
// R, the note code) and IEA with no functional group.
func renderTA1(e *InterchangeError, rp Reply) []byte {
	w := &writer{}
	w.header(rp.answerTo(e.env, "", ""), rp.Control, rp.Time, "", "")
	ctl, date, tm := "000000000", rp.Time.UTC().Format("060102"), rp.Time.UTC().Format("1504")
	if e.env != nil && digits(e.env.Control) && len(e.env.Control) == 9 {
		ctl = e.env.Control
		if validDate("060102", e.env.Date) && validDate("1504", e.env.Time) {
			date, tm = e.env.Date, e.env.Time
		}
	}
	w.seg("TA1", ctl, date, tm, "R", e.Note)
	w.trailer(rp.Control, 0)
	return w.buf.Bytes()
}

// render999 writes one 999 transaction set per received functional group:
// AK1, an AK2 loop per transaction set (IK3/IK4 for each segment in
// error, IK5), AK9.
func render999(ic *interchange, rp Reply) []byte {
	w := &writer{}
	g0 := ic.groups[0].gs
	w.header(rp.answerTo(&ic.env, g0.elem(2), g0.elem(3)), rp.Control, rp.Time, "FA", AckVersion)
	for i, g := range ic.groups {
		stCtl := fmt.Sprintf("%04d", i+1)
		w.startSet("999", stCtl, AckVersion)
		version := g.gs.elem(8)
		if version == "" || len(version) > 12 || !printable(version) || containsSep(version) {
			version = Version
		}
		fid := g.gs.elem(1)
		if !contains([]string{"BE", "HB", "HC", "HI", "HN", "HP", "HR", "HS", "RA"}, fid) {
			fid = "HS"
		}
		gctl := g.control()
		if !digits(gctl) || len(gctl) > 9 {
			gctl = "0"
		}
		w.seg("AK1", fid, gctl, version)
		accepted := 0
		for _, t := range g.sets {
			setID := t.segs[0].elem(1)
			if !contains([]string{"270", "271", "276", "277", "278", "820", "834", "835", "837"}, setID) {
				setID = "270"
			}
			setCtl := t.control()
			if len(setCtl) < 4 || len(setCtl) > 9 || !printable(setCtl) || containsSep(setCtl) {
				setCtl = "0000"
			}
			conv := t.segs[0].elem(3)
			if len(conv) > 35 || !printable(conv) || containsSep(conv) {
				conv = ""
			}
			w.seg("AK2", setID, setCtl, conv)
			for _, se := range t.segErrs {
				w.seg("IK3", se.ID, strconv.Itoa(se.Pos), se.Loop, se.Code)
				for _, ee := range se.Elements {
					w.seg("IK4", ee.Pos, ee.Ref, ee.Code)
				}
			}
			if t.rejected() {
				codes := t.errors
				if len(codes) > 5 {
					codes = codes[:5]
				}
				w.seg("IK5", append([]string{"R"}, codes...)...)
			} else {
				accepted++
				w.seg("IK5", "A")
			}
		}
		ak9 := "A"
		switch {
		case len(g.errors) > 0 || accepted == 0:
			ak9 = "R"
		case accepted < len(g.sets):
			ak9 = "P"
		}
		// AK902 is what the group's trailer declared, when it is a count.
		included := strconv.Itoa(len(g.sets))
		if d := g.declared; digits(d) && len(d) <= 6 {
			included = strings.TrimLeft(d, "0")
			if included == "" {
				included = "0"
			}
		}
		codes := g.errors
		if len(codes) > 5 {
			codes = codes[:5]
		}
		w.seg("AK9", append([]string{ak9, included, strconv.Itoa(len(g.sets)), strconv.Itoa(accepted)}, codes...)...)
		w.endSet(stCtl)
	}
	w.trailer(rp.Control, len(ic.groups))
	return w.buf.Bytes()
}

// containsSep reports whether s holds one of the separators the answers use.
func containsSep(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ElementSep, SubElementSep, RepetitionSep, SegmentTerm:
			return true
		}
	}
	return false
}
