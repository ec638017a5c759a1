package fhir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/healthagents/healthagents/record"
)

// MaxNDJSONRecords bounds the Bundles ReadNDJSON reads from one stream.
const MaxNDJSONRecords = 1 << 20

// ReadNDJSON reads newline-delimited JSON with one FHIR R4 Bundle per line
// and per patient, as a FHIR bulk export ($export, grouped by patient)
// gives it, and maps each Bundle as Parse does (opts.Label names the
// federated label). Blank lines are skipped. An error names the line and
// the element, e.g. "line 3: Bundle.entry[1].resource(Coverage).period.start:
// missing"; it never repeats a value.
func ReadNDJSON(r io.Reader, opts Options) ([]*record.Record, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []*record.Record
	for line := 1; ; line++ {
		b, err := readLine(br)
		if errors.Is(err, io.EOF) && len(b) == 0 {
			return out, nil
		}
		if errors.Is(err, errLineTooLong) {
			return nil, &Error{Path: fmt.Sprintf("line %d", line), Reason: fmt.Sprintf("is longer than %d bytes", MaxSize)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		b = bytes.TrimSpace(b)
		if len(b) > 0 {
			if len(out) >= MaxNDJSONRecords {
				return nil, &Error{Path: fmt.Sprintf("line %d", line), Reason: fmt.Sprintf("more than %d Bundles", MaxNDJSONRecords)}
			}
			rec, perr := Parse(b, opts)
			if perr != nil {
				var fe *Error
				if errors.As(perr, &fe) {
					return nil, &Error{Path: fmt.Sprintf("line %d: %s", line, fe.Path), Reason: fe.Reason}
				}
				return nil, fmt.Errorf("line %d: %w", line, perr)
			}
			out = append(out, rec)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line (without its newline) of at most MaxSize bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	for {
		chunk, err := br.ReadSlice('\n')
		if buf.Len()+len(chunk) > MaxSize+1 {
			return nil, errLineTooLong
		}
		buf.Write(chunk)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return buf.Bytes(), err
		}
		return bytes.TrimRight(buf.Bytes(), "\r\n"), nil
	}
}

// ParseLabel reads a label as a FHIR token, SYSTEM|CODE (e.g.
// "http://hl7.org/fhir/sid/icd-10-cm|E11"); an ICD-10-CM code matches
// as a prefix (the codes are hierarchical: E11 covers E11.9), any other
// exactly.
func ParseLabel(token, positive, negative string) (*Label, error) {
	system, code, ok := strings.Cut(token, "|")
	if !ok || strings.TrimSpace(system) == "" || strings.TrimSpace(code) == "" {
		return nil, fmt.Errorf("%w: a label is SYSTEM|CODE, e.g. %s|E11", ErrInvalid, SystemICD10CM)
	}
	return &Label{System: system, Code: code, Prefix: system == SystemICD10CM, Positive: positive, Negative: negative}, nil
}
