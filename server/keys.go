package server

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

var keyIDParam = []openapi.Param{{Name: "key_id", Description: "The key's public id (the 10 characters after sk_live_ / sk_dev_).", Example: "4Gq0bT2xZk"}}

func (s *srv) keyRoutes() []route {
	return []route{
		{Method: "POST", Path: "/auth/keys", Class: ratelimit.ClassGeneral, Body: SmallBodyBytes, AdminBearer: true,
			Handler: http.HandlerFunc(s.createKey), Doc: openapi.Operation{
				OperationID: "createKey", Tags: []string{"keys"}, Summary: "Create an API key",
				Description: "Bearer: the ADMIN_TOKEN, the one-time bootstrap token printed at first start, or a key with the keys:admin scope. The body is optional.",
				Request:     api.CreateKeyRequest{}, Responses: ok("The new key, shown once.", api.KeyCreated{}),
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/keys", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.listKeys), Doc: openapi.Operation{
				OperationID: "listKeys", Tags: []string{"keys"}, Summary: "List API keys",
				Description: "Needs keys:admin; an admin key bound to an organization sees that organization's keys.",
				Responses:   ok("A page of keys.", api.KeyList{}), QueryParams: pageParams,
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/keys/rotate", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.rotateKey), Doc: openapi.Operation{
				OperationID: "rotateKey", Tags: []string{"keys"}, Summary: "Rotate the calling key",
				Description: "Issues a successor of the key in the Authorization header; the old key keeps working for 24 hours, then gets 401. A key is rotated once (409 after).",
				Responses:   ok("The new key, shown once.", api.KeyCreated{}),
				Errors:      []int{401, 403, 409, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "DELETE", Path: "/api/keys/{key_id}", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.revokeKey), Doc: openapi.Operation{
				OperationID: "revokeKey", Tags: []string{"keys"}, Summary: "Revoke a key immediately",
				Description: "A key may revoke itself; a keys:admin key any key of its organization.",
				PathParams:  keyIDParam, Responses: ok("Revoked.", api.KeyRevoked{}),
				Errors: []int{401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/keys/{key_id}/usage", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.keyUsage), Doc: openapi.Operation{
				OperationID: "getKeyUsage", Tags: []string{"keys"}, Summary: "Requests, errors and latency of a key",
				PathParams: keyIDParam,
				QueryParams: []openapi.Param{{Name: "window", Description: "The window ending now: a Go duration (90m, 24h) or days (7d); default 24h, at most 90d.",
					Schema: &openapi.Schema{Type: openapi.Types{"string"}, Default: "24h"}}},
				Responses: ok("Usage over the window.", api.KeyUsage{}),
				Errors:    []int{400, 401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/keys/{key_id}/whitelist", Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.whitelistKey), Doc: openapi.Operation{
				OperationID: "whitelistKey", Tags: []string{"keys"}, Summary: "Restrict a key to addresses",
				Description: "Replaces the key's allow-list; requests from elsewhere get 403.",
				PathParams:  keyIDParam, Request: api.WhitelistRequest{}, Responses: ok("The allow-list now in force.", api.Whitelist{}),
				Errors: []int{400, 401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
}

var pageParams = []openapi.Param{
	{Name: "offset", Description: "Results to skip.", Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptrFloat(0), Default: 0}},
	{Name: "limit", Description: "Results to return (1-100).", Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptrFloat(1), Maximum: ptrFloat(100), Default: 10}},
}

func ptrFloat(f float64) *float64 { return &f }

// wholeListPageParams are offset and limit of a list answered whole when
// neither is given (a short list: the payers, the federated tasks); with
// either, it is paged as pageParams say.
var wholeListPageParams = []openapi.Param{
	{Name: "offset", Description: "Results to skip; without offset and limit, the whole list.", Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptrFloat(0), Default: 0}},
	{Name: "limit", Description: "Results to return (1-100; 10 when only offset is given); without offset and limit, the whole list.", Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptrFloat(1), Maximum: ptrFloat(100)}},
}

// pageOfWhole cuts the page offset/limit asks for out of a whole list
// (pageParams' rules); with neither given, the whole list.
func pageOfWhole[T any](r *http.Request, all []T) ([]T, error) {
	q := r.URL.Query()
	if !q.Has("offset") && !q.Has("limit") {
		return all, nil
	}
	offset, limit, err := parsePage(r)
	if err != nil {
		return nil, err
	}
	if offset >= len(all) {
		return []T{}, nil
	}
	return all[offset:min(offset+limit, len(all))], nil
}

// parsePage reads offset (default 0) and limit (default 10, max 100) for
// list endpoints; anything else is a 400.
func parsePage(r *http.Request) (offset, limit int, err error) {
	q := r.URL.Query()
	offset, limit = 0, 10
	if v := q.Get("offset"); v != "" || q.Has("offset") {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 {
			return 0, 0, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: offset must be an integer of at least 0")
		}
		offset = n
	}
	if v := q.Get("limit"); v != "" || q.Has("limit") {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > apikey.MaxPageSize {
			return 0, 0, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: limit must be an integer from 1 to %d", apikey.MaxPageSize)
		}
		limit = n
	}
	return offset, limit, nil
}

// keyError maps apikey errors onto the service's codes.
func keyError(err error) error {
	switch {
	case errors.Is(err, apikey.ErrInvalid):
		return healthagents.WrapError(healthagents.CodeUnauthorized, err, detailUnauthorized)
	case errors.Is(err, apikey.ErrForbidden):
		return healthagents.WrapError(healthagents.CodeForbidden, err, detailForbidden)
	case errors.Is(err, apikey.ErrNotFound):
		return healthagents.WrapError(healthagents.CodeNotFound, err, "API key not found")
	case errors.Is(err, apikey.ErrConflict):
		return healthagents.WrapError(healthagents.CodeConflict, err, "API key was already rotated")
	case errors.Is(err, apikey.ErrBadRequest):
		msg := strings.TrimPrefix(err.Error(), apikey.ErrBadRequest.Error()+": ")
		return healthagents.WrapError(healthagents.CodeInvalid, err, "Validation error: "+msg)
	}
	return healthagents.WrapError(healthagents.CodeUnavailable, err, detailUnavailable)
}

func (s *srv) keysOrFail(w http.ResponseWriter, r *http.Request) (*apikey.Service, bool) {
	if s.deps.Keys == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return nil, false
	}
	return s.deps.Keys, true
}

func (s *srv) createKey(w http.ResponseWriter, r *http.Request) {
	keys, ok := s.keysOrFail(w, r)
	if !ok {
		return
	}
	var req api.CreateKeyRequest
	body, err := readBody(w, r, SmallBodyBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decode(body, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	p, err := s.createParams(req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Who is asking: a keys:admin key (authenticated by guard), or the
	// ADMIN_TOKEN / a bootstrap token.
	if creator := requestKey(r); creator != nil {
		if err := mayCreate(creator, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.CreatedBy = creator.ID
	} else {
		bearer, _, _ := bearerToken(r)
		by, err := keys.AuthorizeAdmin(r.Context(), bearer)
		if err != nil {
			if errors.Is(err, apikey.ErrInvalid) {
				writeDetail(w, http.StatusUnauthorized, detailUnauthorized)
				return
			}
			s.writeError(w, r, keyError(err))
			return
		}
		p.CreatedBy = by
		if by == apikey.ByBootstrap && req.Scopes == nil {
			p.Scopes = slices.Clone(apikey.AllScopes) // the first key administers the rest
		}
	}
	raw, k, err := keys.Create(r.Context(), p)
	if err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	writeJSON(w, http.StatusOK, created(raw, k))
}

func (s *srv) createParams(req api.CreateKeyRequest) (apikey.CreateParams, error) {
	p := apikey.CreateParams{
		Name: req.Name, Tier: apikey.Tier(req.Tier), Organization: req.Organization,
		Restricted: req.Restricted, RateLimit: req.RateLimit, DailyQuota: req.DailyQuota,
	}
	switch req.Env {
	case "":
		p.Env = apikey.Dev
		if s.opts.auth.production {
			p.Env = apikey.Live
		}
	case string(apikey.Live), string(apikey.Dev):
		p.Env = apikey.Env(req.Env)
	default:
		return p, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: env must be live or dev")
	}
	if p.Env == apikey.Dev && s.opts.auth.production {
		return p, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: sk_dev_ keys are not issued in production")
	}
	if req.Scopes != nil {
		p.Scopes = []apikey.Scope{}
		for _, sc := range req.Scopes {
			v, err := apikey.ParseScope(sc)
			if err != nil {
				return p, keyError(err)
			}
			p.Scopes = append(p.Scopes, v)
		}
	}
	if req.AllowedIPs != nil {
		ips, err := apikey.ParseAllowList(req.AllowedIPs)
		if err != nil {
			return p, keyError(err)
		}
		p.AllowedIPs = ips
	}
	if req.ExpiresAt != nil {
		p.ExpiresAt = *req.ExpiresAt
	}
	return p, nil
}

// mayCreate checks that a key may create a key with p: it needs keys:admin,
// may grant only scopes it holds, and when bound to an organization creates
// keys of that organization only, without limit overrides.
func mayCreate(creator *apikey.Key, p *apikey.CreateParams) error {
	forbidden := healthagents.Errorf(healthagents.CodeForbidden, detailForbidden)
	if !creator.HasScope(apikey.ScopeKeysAdmin) {
		return forbidden
	}
	scopes := p.Scopes
	if scopes == nil {
		scopes = apikey.DefaultScopes()
	}
	for _, sc := range scopes {
		if !creator.HasScope(sc) {
			return forbidden
		}
	}
	if creator.Organization != "" {
		if p.Organization != "" && p.Organization != creator.Organization {
			return forbidden
		}
		p.Organization = creator.Organization
		if p.RateLimit != 0 || p.DailyQuota != 0 || tierRank(p.Tier) > tierRank(creator.Tier) {
			return forbidden
		}
	}
	return nil
}

func tierRank(t apikey.Tier) int {
	switch t {
	case apikey.Pro:
		return 1
	case apikey.Enterprise:
		return 2
	}
	return 0
}

func created(raw string, k *apikey.Key) api.KeyCreated {
	c := api.KeyCreated{
		APIKey: raw, CreatedAt: k.CreatedAt, KeyID: k.ID, Env: string(k.Env), Tier: string(k.Tier),
		Scopes: scopeStrings(k.Scopes), Organization: k.Organization,
	}
	if !k.ExpiresAt.IsZero() {
		c.ExpiresAt = &k.ExpiresAt
	}
	return c
}

func scopeStrings(ss []apikey.Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func keyInfo(k *apikey.Key, now time.Time) api.KeyInfo {
	ki := api.KeyInfo{
		KeyID: k.ID, Env: string(k.Env), Name: k.Name, Tier: string(k.Tier), Scopes: scopeStrings(k.Scopes),
		Organization: k.Organization, AllowedIPs: prefixStrings(k), Restricted: k.Restricted,
		RateLimit: k.RateLimit, DailyQuota: k.DailyQuota, CreatedAt: k.CreatedAt, RotatedTo: k.RotatedTo,
		Active: k.Active(now),
	}
	if !k.ExpiresAt.IsZero() {
		ki.ExpiresAt = &k.ExpiresAt
	}
	if !k.RevokedAt.IsZero() {
		ki.RevokedAt = &k.RevokedAt
	}
	return ki
}

func prefixStrings(k *apikey.Key) []string {
	out := make([]string, 0, len(k.AllowedIPs))
	for _, p := range k.AllowedIPs {
		if p.IsSingleIP() {
			out = append(out, p.Addr().String())
		} else {
			out = append(out, p.String())
		}
	}
	return out
}

// managed returns the key named in the path if the caller may manage it.
func (s *srv) managed(w http.ResponseWriter, r *http.Request) (*apikey.Key, bool) {
	keys, ok := s.keysOrFail(w, r)
	if !ok {
		return nil, false
	}
	caller := requestKey(r)
	target, err := keys.Get(r.Context(), r.PathValue("key_id"))
	if err != nil {
		if errors.Is(err, apikey.ErrNotFound) && caller != nil && !caller.HasScope(apikey.ScopeKeysAdmin) {
			err = apikey.ErrForbidden // do not tell other keys' ids apart from unknown ones
		}
		s.writeError(w, r, keyError(err))
		return nil, false
	}
	if caller == nil || !caller.CanManage(target) {
		s.writeError(w, r, keyError(apikey.ErrForbidden))
		return nil, false
	}
	return target, true
}

func (s *srv) listKeys(w http.ResponseWriter, r *http.Request) {
	keys, ok := s.keysOrFail(w, r)
	if !ok {
		return
	}
	caller := requestKey(r)
	if caller == nil || !caller.HasScope(apikey.ScopeKeysAdmin) {
		s.writeError(w, r, keyError(apikey.ErrForbidden))
		return
	}
	offset, limit, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ks, total, err := keys.List(r.Context(), apikey.ListOptions{Organization: caller.Organization, Offset: offset, Limit: limit})
	if err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	now := time.Now()
	out := api.KeyList{Keys: make([]api.KeyInfo, 0, len(ks)), Total: total, Offset: offset, Limit: limit}
	for i := range ks {
		out.Keys = append(out.Keys, keyInfo(&ks[i], now))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *srv) rotateKey(w http.ResponseWriter, r *http.Request) {
	keys, ok := s.keysOrFail(w, r)
	if !ok {
		return
	}
	caller := requestKey(r)
	if caller == nil {
		writeDetail(w, http.StatusUnauthorized, detailUnauthorized)
		return
	}
	raw, k, err := keys.Rotate(r.Context(), caller.ID)
	if err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	c := created(raw, k)
	c.Replaces = caller.ID
	if old, err := keys.Get(r.Context(), caller.ID); err == nil && !old.ExpiresAt.IsZero() {
		c.OldKeyExpiresAt = &old.ExpiresAt
		c.OldKeyValidHours = int(old.ExpiresAt.Sub(k.CreatedAt).Round(time.Hour).Hours())
	}
	writeJSON(w, http.StatusOK, c)
}

func (s *srv) revokeKey(w http.ResponseWriter, r *http.Request) {
	target, ok := s.managed(w, r)
	if !ok {
		return
	}
	if err := s.deps.Keys.Revoke(r.Context(), target.ID); err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	k, err := s.deps.Keys.Get(r.Context(), target.ID)
	if err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	writeJSON(w, http.StatusOK, api.KeyRevoked{KeyID: k.ID, Revoked: true, RevokedAt: k.RevokedAt})
}

func (s *srv) keyUsage(w http.ResponseWriter, r *http.Request) {
	target, ok := s.managed(w, r)
	if !ok {
		return
	}
	window := 24 * time.Hour
	if v := r.URL.Query().Get("window"); v != "" {
		d, err := parseWindow(v)
		if err != nil {
			s.writeError(w, r, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: window must be a duration such as 1h, 24h or 7d, at most 90d"))
			return
		}
		window = d
	}
	u, err := s.deps.Keys.Usage(r.Context(), target.ID, window)
	if err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	out := api.KeyUsage{
		KeyID: u.KeyID, WindowSeconds: int64(window / time.Second), From: u.From, To: u.To,
		Requests: u.Requests, Errors: u.Errors,
		LatencyMS: api.Latencies{P50: ms(u.P50), P95: ms(u.P95), P99: ms(u.P99)},
	}
	if u.Requests > 0 {
		out.ErrorRate = float64(u.Errors) / float64(u.Requests)
	}
	writeJSON(w, http.StatusOK, out)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// parseWindow accepts a Go duration or a number of days ("7d").
func parseWindow(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 {
			return 0, errors.New("bad window")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > apikey.MaxUsageWindow {
		return 0, errors.New("bad window")
	}
	return d, nil
}

func (s *srv) whitelistKey(w http.ResponseWriter, r *http.Request) {
	target, ok := s.managed(w, r)
	if !ok {
		return
	}
	var req api.WhitelistRequest
	if err := read(w, r, SmallBodyBytes, &req, "ips"); err != nil {
		s.writeError(w, r, err)
		return
	}
	ips, err := apikey.ParseAllowList(req.IPs)
	if err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	if err := s.deps.Keys.SetWhitelist(r.Context(), target.ID, ips); err != nil {
		s.writeError(w, r, keyError(err))
		return
	}
	k := *target
	k.AllowedIPs = ips
	writeJSON(w, http.StatusOK, api.Whitelist{KeyID: k.ID, IPs: prefixStrings(&k)})
}
