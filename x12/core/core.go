// Package core reads and writes the CAQH CORE connectivity envelope over
// HTTP (the MIME multipart/form-data variant of the CORE connectivity
// rule, version 2.2.0 and later) in which payers and clearinghouses
// exchange real-time X12: a request's PayloadType, ProcessingMode,
// PayloadID, TimeStamp, SenderID, ReceiverID, CORERuleVersion and Payload,
// and the answer's same fields with ErrorCode and ErrorMessage. It knows
// no HTTP: the server hands it a body and a boundary (docs/x12.md).
package core

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"regexp"
	"strings"
	"time"
)

// Payload types this package reads and writes.
const (
	PayloadType270 = "X12_270_Request_005010X279A1"
	PayloadType271 = "X12_271_Response_005010X279A1"
	PayloadType999 = "X12_999_Response_005010X231A1"
	PayloadTypeTA1 = "X12_TA1_Response_00501X231A1"
	// PayloadTypeError answers an envelope that could not be processed.
	PayloadTypeError = "CoreEnvelopeError"
	// RealTime is the processing mode served; batch is not.
	RealTime = "RealTime"
	// Success is the ErrorCode of a processed envelope.
	Success = "Success"
)

// RuleVersions are the CORERuleVersion values accepted (and echoed).
var RuleVersions = []string{"2.2.0", "3.1.0", "4.0.0"}

// Envelope is one CORE envelope. A request has the first eight fields; an
// answer adds ErrorCode and ErrorMessage.
type Envelope struct {
	PayloadType, ProcessingMode, PayloadID, TimeStamp string
	SenderID, ReceiverID, CORERuleVersion             string
	Payload                                           []byte
	ErrorCode, ErrorMessage                           string
}

// Error is a request envelope that cannot be processed: the answer is a
// CoreEnvelopeError envelope with ErrorCode Code (e.g. PayloadIDRequired,
// ProcessingModeNotSupported, VersionMismatch) and Message.
type Error struct {
	Code, Message string
}

func (e *Error) Error() string { return "CORE envelope: " + e.Code + ": " + e.Message }

// ErrInvalid is wrapped by the errors of envelopes Write cannot write.
var ErrInvalid = errors.New("core: invalid envelope")

// fieldNames are the request's fields, in the rule's order.
var fieldNames = []string{"PayloadType", "ProcessingMode", "PayloadID", "TimeStamp", "SenderID", "ReceiverID", "CORERuleVersion", "Payload"}

// maxFieldBytes bounds every field but Payload.
const maxFieldBytes = 1024

var uuidPattern = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)

// ReadRequest reads a real-time 270 request envelope from a
// multipart/form-data body with the given boundary. Parts other than the
// rule's fields (UserName, Password: the service authenticates by API key)
// are read past, never kept. A body that is not such an envelope, or one
// whose fields the rule does not allow, is an *Error.
func ReadRequest(body []byte, boundary string) (*Envelope, error) {
	if boundary == "" {
		return nil, &Error{Code: "Sender", Message: "the body is not multipart/form-data with a boundary"}
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	got := map[string][]byte{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{Code: "Sender", Message: "the multipart body cannot be read"}
		}
		name := p.FormName()
		known := false
		for _, f := range fieldNames {
			known = known || f == name
		}
		if !known {
			_, _ = io.Copy(io.Discard, p)
			continue
		}
		if _, dup := got[name]; dup {
			return nil, &Error{Code: name + "Invalid", Message: name + " is given twice"}
		}
		limit := int64(maxFieldBytes)
		if name == "Payload" {
			limit = int64(len(body))
		}
		v, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err != nil || int64(len(v)) > limit {
			return nil, &Error{Code: name + "Invalid", Message: name + " cannot be read or is too long"}
		}
		got[name] = v
	}
	e := &Envelope{}
	for _, f := range fieldNames {
		v, ok := got[f]
		if !ok || len(bytes.TrimSpace(v)) == 0 {
			return nil, &Error{Code: f + "Required", Message: f + " is required"}
		}
		s := strings.TrimSpace(string(v))
		if f != "Payload" && !printable(s) {
			return nil, &Error{Code: f + "Invalid", Message: f + " holds a control or non-ASCII character"}
		}
		switch f {
		case "PayloadType":
			e.PayloadType = s
		case "ProcessingMode":
			e.ProcessingMode = s
		case "PayloadID":
			e.PayloadID = s
		case "TimeStamp":
			e.TimeStamp = s
		case "SenderID":
			e.SenderID = s
		case "ReceiverID":
			e.ReceiverID = s
		case "CORERuleVersion":
			e.CORERuleVersion = s
		case "Payload":
			e.Payload = v
		}
	}
	switch {
	case e.ProcessingMode != RealTime:
		return nil, &Error{Code: "ProcessingModeNotSupported", Message: "only RealTime is served"}
	case e.PayloadType != PayloadType270:
		return nil, &Error{Code: "PayloadTypeNotSupported", Message: "this route takes " + PayloadType270}
	case !contains(RuleVersions, e.CORERuleVersion):
		return nil, &Error{Code: "VersionMismatch", Message: "CORERuleVersion must be one of " + strings.Join(RuleVersions, ", ")}
	case !uuidPattern.MatchString(e.PayloadID):
		return nil, &Error{Code: "PayloadIDInvalid", Message: "PayloadID must be a UUID"}
	}
	if _, err := time.Parse(time.RFC3339, e.TimeStamp); err != nil {
		return nil, &Error{Code: "TimeStampInvalid", Message: "TimeStamp must be an XML dateTime such as 2026-11-25T09:00:00Z"}
	}
	return e, nil
}

// Answer is the envelope answering req: the same PayloadID,
// CORERuleVersion and processing mode, the parties swapped, stamped at.
func Answer(req *Envelope, payloadType string, payload []byte, at time.Time) *Envelope {
	return &Envelope{
		PayloadType: payloadType, ProcessingMode: RealTime, PayloadID: req.PayloadID, TimeStamp: at.UTC().Format(time.RFC3339),
		SenderID: req.ReceiverID, ReceiverID: req.SenderID, CORERuleVersion: req.CORERuleVersion,
		Payload: payload, ErrorCode: Success, ErrorMessage: "None",
	}
}

// ErrorAnswer is the CoreEnvelopeError answering a request whose envelope
// failed (req may be nil or partial: what it holds is echoed).
func ErrorAnswer(req *Envelope, e *Error, senderID string, at time.Time) *Envelope {
	out := &Envelope{PayloadType: PayloadTypeError, ProcessingMode: RealTime, TimeStamp: at.UTC().Format(time.RFC3339),
		SenderID: senderID, CORERuleVersion: RuleVersions[0], ErrorCode: e.Code, ErrorMessage: e.Message}
	if req != nil {
		out.PayloadID, out.ReceiverID = req.PayloadID, req.SenderID
		if contains(RuleVersions, req.CORERuleVersion) {
			out.CORERuleVersion = req.CORERuleVersion
		}
	}
	return out
}

// Write writes e as multipart/form-data (one part per non-empty field, in
// the rule's order, ErrorCode and ErrorMessage last) and returns the
// Content-Type to send it with.
func Write(w io.Writer, e *Envelope) (string, error) {
	mw := multipart.NewWriter(w)
	fields := []struct {
		name  string
		value []byte
	}{
		{"PayloadType", []byte(e.PayloadType)}, {"ProcessingMode", []byte(e.ProcessingMode)}, {"PayloadID", []byte(e.PayloadID)},
		{"TimeStamp", []byte(e.TimeStamp)}, {"SenderID", []byte(e.SenderID)}, {"ReceiverID", []byte(e.ReceiverID)},
		{"CORERuleVersion", []byte(e.CORERuleVersion)}, {"Payload", e.Payload}, {"ErrorCode", []byte(e.ErrorCode)}, {"ErrorMessage", []byte(e.ErrorMessage)},
	}
	for _, f := range fields {
		if len(f.value) == 0 {
			continue
		}
		if f.name != "Payload" && !printable(string(f.value)) {
			return "", fmt.Errorf("%w: %s holds a control or non-ASCII character", ErrInvalid, f.name)
		}
		if err := mw.WriteField(f.name, string(f.value)); err != nil {
			return "", err
		}
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	return mime.FormatMediaType("multipart/form-data", map[string]string{"boundary": mw.Boundary()}), nil
}

// Read reads any envelope (a request or an answer) without the request
// checks: the SDK's and the tests' reader of answers.
func Read(body []byte, boundary string) (*Envelope, error) {
	form, err := multipart.NewReader(bytes.NewReader(body), boundary).ReadForm(int64(len(body)) + 1)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	v := func(name string) string {
		if vs := form.Value[name]; len(vs) == 1 {
			return vs[0]
		}
		return ""
	}
	return &Envelope{
		PayloadType: v("PayloadType"), ProcessingMode: v("ProcessingMode"), PayloadID: v("PayloadID"), TimeStamp: v("TimeStamp"),
		SenderID: v("SenderID"), ReceiverID: v("ReceiverID"), CORERuleVersion: v("CORERuleVersion"), Payload: []byte(v("Payload")),
		ErrorCode: v("ErrorCode"), ErrorMessage: v("ErrorMessage"),
	}, nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
