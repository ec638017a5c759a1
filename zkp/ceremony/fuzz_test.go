package ceremony_test

import (
	"testing"

	"github.com/healthagents/healthagents/zkp/ceremony"
)

// FuzzTranscriptFile: any bytes given as a transcript file are parsed,
// verified and contributed to without a panic, and without allocating more
// than the bytes present justify (the seeds are real files of a small
// ceremony).
func FuzzTranscriptFile(f *testing.F) {
	tr, err := threeParty()
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range []*ceremony.File{tr.phase1[0], tr.phase1[1], tr.srs, tr.phase2[0], tr.phase2[1]} {
		f.Add(file.Bytes())
	}
	f.Add([]byte(`{"format":"healthagents/ceremony/v1","kind":"phase1","power":24,"sections":[{"name":"powers-of-tau","bytes":4}]}` + "\n\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := ceremony.Parse(b)
		if err != nil {
			return
		}
		ctx := t.Context()
		switch file.Kind {
		case ceremony.KindPhase1:
			_, _, _ = ceremony.VerifyPhase1(ctx, []*ceremony.File{file})
			_, _ = ceremony.Contribute(ctx, file)
		case ceremony.KindPhase2:
			_, _ = ceremony.VerifyPhase2(ctx, tr.srs, testCircuits(), []*ceremony.File{file})
			_, _ = ceremony.Contribute(ctx, file)
		case ceremony.KindSRS:
			_, _ = ceremony.VerifySRS(ctx, tr.phase1, file)
			_, _ = ceremony.NewPhase2(ctx, file, testCircuits())
		}
	})
}
