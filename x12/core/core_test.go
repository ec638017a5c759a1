package core_test

import (
	"bytes"
	"errors"
	"mime"
	"mime/multipart"
	"reflect"
	"testing"
	"time"

	"github.com/healthagents/healthagents/x12/core"
)

const payload = "ISA*00*..."

// request builds a multipart request from fields (a name with value "" is
// left out); file sends Payload as a file part.
func request(t testing.TB, fields map[string]string, file bool) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, name := range []string{"PayloadType", "ProcessingMode", "PayloadID", "TimeStamp", "UserName", "Password", "SenderID", "ReceiverID", "CORERuleVersion", "Payload"} {
		v, ok := fields[name]
		if !ok || v == "" {
			continue
		}
		if name == "Payload" && file {
			w, err := mw.CreateFormFile("Payload", "request.270")
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write([]byte(v))
			continue
		}
		if err := mw.WriteField(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.Boundary()
}

func good() map[string]string {
	return map[string]string{
		"PayloadType": core.PayloadType270, "ProcessingMode": core.RealTime, "PayloadID": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
		"TimeStamp": "2026-11-25T09:00:00Z", "SenderID": "CLEARINGHOUSE", "ReceiverID": "HEALTHAGENTS", "CORERuleVersion": "2.2.0",
		"UserName": "someone", "Password": "secret", "Payload": payload,
	}
}

func TestReadRequest(t *testing.T) {
	t.Parallel()
	for _, file := range []bool{false, true} {
		body, boundary := request(t, good(), file)
		e, err := core.ReadRequest(body, boundary)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Payload) != payload || e.SenderID != "CLEARINGHOUSE" || e.PayloadID != "f81d4fae-7dec-11d0-a765-00a0c91e6bf6" {
			t.Fatalf("%+v", e)
		}
	}
	for name, tc := range map[string]struct {
		mut  func(map[string]string)
		code string
	}{
		"no payload id":      {func(m map[string]string) { m["PayloadID"] = "" }, "PayloadIDRequired"},
		"no payload":         {func(m map[string]string) { m["Payload"] = "" }, "PayloadRequired"},
		"no sender":          {func(m map[string]string) { m["SenderID"] = "" }, "SenderIDRequired"},
		"batch":              {func(m map[string]string) { m["ProcessingMode"] = "Batch" }, "ProcessingModeNotSupported"},
		"276":                {func(m map[string]string) { m["PayloadType"] = "X12_276_Request_005010X212" }, "PayloadTypeNotSupported"},
		"rule version":       {func(m map[string]string) { m["CORERuleVersion"] = "1.0.0" }, "VersionMismatch"},
		"payload id":         {func(m map[string]string) { m["PayloadID"] = "12345" }, "PayloadIDInvalid"},
		"time stamp":         {func(m map[string]string) { m["TimeStamp"] = "yesterday" }, "TimeStampInvalid"},
		"control in a field": {func(m map[string]string) { m["SenderID"] = "A\x01B" }, "SenderIDInvalid"},
	} {
		t.Run(name, func(t *testing.T) {
			m := good()
			tc.mut(m)
			body, boundary := request(t, m, false)
			_, err := core.ReadRequest(body, boundary)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
	if _, err := core.ReadRequest([]byte("not multipart"), "xyz"); err == nil {
		t.Fatal("garbage read")
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	body, boundary := request(t, good(), false)
	req, err := core.ReadRequest(body, boundary)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 9, 0, 1, 0, time.UTC)
	var b bytes.Buffer
	ct, err := core.Write(&b, core.Answer(req, core.PayloadType271, []byte("ISA*271..."), at))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("%s %v", ct, err)
	}
	got, err := core.Read(b.Bytes(), params["boundary"])
	if err != nil {
		t.Fatal(err)
	}
	want := core.Envelope{PayloadType: core.PayloadType271, ProcessingMode: core.RealTime, PayloadID: req.PayloadID, TimeStamp: "2026-11-25T09:00:01Z",
		SenderID: "HEALTHAGENTS", ReceiverID: "CLEARINGHOUSE", CORERuleVersion: "2.2.0", Payload: []byte("ISA*271..."), ErrorCode: core.Success, ErrorMessage: "None"}
	if string(got.Payload) != string(want.Payload) {
		t.Fatalf("payload %q", got.Payload)
	}
	got.Payload, want.Payload = nil, nil
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	b.Reset()
	if _, err := core.Write(&b, core.ErrorAnswer(req, &core.Error{Code: "VersionMismatch", Message: "m"}, "HEALTHAGENTS", at)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("secret")) || bytes.Contains(b.Bytes(), []byte("someone")) {
		t.Fatal("the request's credentials are echoed")
	}
}

// FuzzReadRequest: any body and boundary is an envelope with every field
// set, or an *Error naming a code; never a panic.
func FuzzReadRequest(f *testing.F) {
	body, boundary := request(f, good(), false)
	f.Add(body, boundary)
	f.Add([]byte("--x\r\nContent-Disposition: form-data; name=\"PayloadID\"\r\n\r\nabc\r\n--x--\r\n"), "x")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		e, err := core.ReadRequest(body, boundary)
		if err != nil {
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code == "" {
				t.Fatalf("not a CORE error: %v", err)
			}
			return
		}
		if e.PayloadID == "" || e.SenderID == "" || e.ReceiverID == "" || len(e.Payload) == 0 || e.ProcessingMode != core.RealTime {
			t.Fatalf("an envelope with a field missing: %+v", e)
		}
	})
}
