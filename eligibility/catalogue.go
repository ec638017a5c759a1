package eligibility

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

//go:embed data/catalogue.json
var dataFS embed.FS

// defaultCatalogue is the path of the embedded catalogue inside dataFS.
const defaultCatalogue = "data/catalogue.json"

// Coding systems of a [Procedure].
const (
	SystemHealthagents = "healthagents" // the specification's own PROC00n class codes
	SystemCPT          = "CPT"
	SystemHCPCS        = "HCPCS"
)

// ErrCatalogue is wrapped by every error about a malformed catalogue file.
var ErrCatalogue = errors.New("eligibility: invalid procedure catalogue")

// catalogueFile is the on-disk shape of data/catalogue.json.
type catalogueFile struct {
	Version    string          `json:"version"`
	Note       string          `json:"note"`
	Classes    []classFile     `json:"classes"`
	Procedures []procedureFile `json:"procedures"`
}

type classFile struct {
	Code         string `json:"code"`
	Name         string `json:"name"`
	BaseCoverage int    `json:"base_coverage"`
	PreAuth      bool   `json:"pre_auth"`
	Index        int    `json:"index"`
}

type procedureFile struct {
	Code   string `json:"code"`
	Name   string `json:"name"`
	System string `json:"system"`
	Class  string `json:"class"`
}

// catalogue is the parsed, validated, indexed catalogue.
type catalogue struct {
	version string
	classes []Class              // ordered by Index
	byCode  map[string]Procedure // key: canonical code
}

var (
	classCodeRE = regexp.MustCompile(`^PROC[0-9]{3}$`)
	cptRE       = regexp.MustCompile(`^[0-9]{4}[0-9FTU]$`) // Category I (5 digits), II (…F), III (…T), PLA (…U)
	hcpcsRE     = regexp.MustCompile(`^[A-V][0-9]{4}$`)
)

// parseCatalogue decodes and validates a catalogue: unique codes, every class
// referenced exists, indexes 1..n without gaps, coverage 0..100, codes well
// formed for their system. Each class is also a procedure of its own code.
func parseCatalogue(raw []byte) (*catalogue, error) {
	var f catalogueFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCatalogue, err)
	}
	if len(f.Classes) == 0 {
		return nil, fmt.Errorf("%w: no classes", ErrCatalogue)
	}
	c := &catalogue{
		version: f.Version,
		classes: make([]Class, len(f.Classes)),
		byCode:  make(map[string]Procedure, len(f.Classes)+len(f.Procedures)),
	}
	classes := make(map[string]Class, len(f.Classes))
	for _, cf := range f.Classes {
		cl := Class{Code: canonical(cf.Code), Name: strings.TrimSpace(cf.Name), BaseCoverage: cf.BaseCoverage, PreAuth: cf.PreAuth, Index: cf.Index}
		switch {
		case !classCodeRE.MatchString(cl.Code):
			return nil, fmt.Errorf("%w: class code %q is not PROCnnn", ErrCatalogue, cf.Code)
		case cl.Name == "":
			return nil, fmt.Errorf("%w: class %s has no name", ErrCatalogue, cl.Code)
		case cl.BaseCoverage < 0 || cl.BaseCoverage > 100:
			return nil, fmt.Errorf("%w: class %s base coverage %d outside 0-100", ErrCatalogue, cl.Code, cl.BaseCoverage)
		case cl.Index < 1 || cl.Index > len(f.Classes):
			return nil, fmt.Errorf("%w: class %s index %d outside 1-%d", ErrCatalogue, cl.Code, cl.Index, len(f.Classes))
		case c.classes[cl.Index-1].Code != "":
			return nil, fmt.Errorf("%w: class index %d used twice", ErrCatalogue, cl.Index)
		}
		if _, dup := classes[cl.Code]; dup {
			return nil, fmt.Errorf("%w: class %s listed twice", ErrCatalogue, cl.Code)
		}
		classes[cl.Code] = cl
		c.classes[cl.Index-1] = cl
		c.byCode[cl.Code] = Procedure{Code: cl.Code, Name: cl.Name, System: SystemHealthagents, Class: cl}
	}
	for _, pf := range f.Procedures {
		p := Procedure{Code: canonical(pf.Code), Name: strings.TrimSpace(pf.Name), System: pf.System}
		cl, ok := classes[canonical(pf.Class)]
		if !ok {
			return nil, fmt.Errorf("%w: procedure %s refers to unknown class %q", ErrCatalogue, p.Code, pf.Class)
		}
		p.Class = cl
		switch p.System {
		case SystemCPT:
			if !cptRE.MatchString(p.Code) {
				return nil, fmt.Errorf("%w: %q is not a CPT code", ErrCatalogue, pf.Code)
			}
		case SystemHCPCS:
			if !hcpcsRE.MatchString(p.Code) {
				return nil, fmt.Errorf("%w: %q is not a HCPCS level II code", ErrCatalogue, pf.Code)
			}
		default:
			return nil, fmt.Errorf("%w: procedure %s has unknown system %q", ErrCatalogue, p.Code, pf.System)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("%w: procedure %s has no name", ErrCatalogue, p.Code)
		}
		if _, dup := c.byCode[p.Code]; dup {
			return nil, fmt.Errorf("%w: code %s listed twice", ErrCatalogue, p.Code)
		}
		c.byCode[p.Code] = p
	}
	return c, nil
}

// canonical is the lookup form of a code: trimmed and upper-cased. CPT and
// HCPCS codes are upper-case by definition, so this only widens what callers
// may type for the PROC codes and HCPCS letters.
func canonical(code string) string {
	return strings.ToUpper(strings.TrimSpace(code))
}
