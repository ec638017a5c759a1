package server

import (
	"net/http"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/webhook"
)

// WebhookList is a page of endpoints.
type WebhookList struct {
	Webhooks []webhook.Endpoint `json:"webhooks"`
	Total    int                `json:"total"`
	Offset   int                `json:"offset"`
	Limit    int                `json:"limit"`
}

// WebhookAttempts is a page of delivery attempts, newest first.
type WebhookAttempts struct {
	Attempts []webhook.Attempt `json:"attempts"`
	Total    int               `json:"total"`
	Offset   int               `json:"offset"`
	Limit    int               `json:"limit"`
}

// WebhookDeleted answers DELETE /webhooks/{id}.
type WebhookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

var webhookIDParam = []openapi.Param{{Name: "id", Description: "Endpoint id.", Example: "ep_3j2k5m7n9p1q3r5s"}}

func (s *srv) webhookRoutes() []route {
	return []route{
		{Method: "POST", Path: "/webhooks", Scope: apikey.ScopeWebhooks, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.createWebhook), Doc: openapi.Operation{
				OperationID: "createWebhook", Tags: []string{"webhooks"}, Summary: "Register a webhook endpoint",
				Description: "Needs a key with the webhooks scope. Events of requests made with keys of the same owner (organization, or the key's rotation chain) are POSTed to url, signed as the Standard Webhooks specification says. " +
					"400 for an unknown event, a non-HTTPS URL in production, an IPv4 host not written as four decimal numbers, a host resolving to a loopback, private, link-local, CGNAT, multicast or metadata address, or an account's 101st endpoint. " +
					"The secret is shown once; a retry with the same Idempotency-Key from the same key within an hour replays this answer, secret included.",
				Request: webhook.CreateRequest{}, Responses: map[int]openapi.Response{http.StatusCreated: {Description: "The endpoint and its signing secret, shown once.", Body: webhook.Created{}}},
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/webhooks", Scope: apikey.ScopeWebhooks, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.listWebhooks), Doc: openapi.Operation{
				OperationID: "listWebhooks", Tags: []string{"webhooks"}, Summary: "List webhook endpoints",
				Responses: ok("A page of the caller's endpoints, oldest first.", WebhookList{}), QueryParams: pageParams,
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/webhooks/{id}", Scope: apikey.ScopeWebhooks, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.getWebhook), Doc: openapi.Operation{
				OperationID: "getWebhook", Tags: []string{"webhooks"}, Summary: "Get a webhook endpoint",
				PathParams: webhookIDParam, Responses: ok("The endpoint (never its secret).", webhook.Endpoint{}),
				Errors: []int{401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "DELETE", Path: "/webhooks/{id}", Scope: apikey.ScopeWebhooks, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.deleteWebhook), Doc: openapi.Operation{
				OperationID: "deleteWebhook", Tags: []string{"webhooks"}, Summary: "Delete a webhook endpoint",
				Description: "Undelivered events and the attempt history go with it.",
				PathParams:  webhookIDParam, Responses: ok("Deleted.", WebhookDeleted{}),
				Errors: []int{401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/webhooks/{id}/deliveries", Scope: apikey.ScopeWebhooks, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.webhookAttempts), Doc: openapi.Operation{
				OperationID: "listWebhookDeliveries", Tags: []string{"webhooks"}, Summary: "Delivery attempts of an endpoint",
				Description: "Every attempt: status, latency, failure class and at most 256 bytes of the reply, newest first.",
				PathParams:  webhookIDParam, QueryParams: pageParams, Responses: ok("A page of attempts.", WebhookAttempts{}),
				Errors: []int{400, 401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
}

// webhookDocs describes the requests this service sends to subscribers
// (the OpenAPI 3.1 webhooks section).
func webhookDocs() map[string]openapi.Operation {
	const desc = "Sent with the Standard Webhooks headers webhook-id (the same for every attempt of one event to one endpoint), " +
		"webhook-timestamp (Unix seconds of the attempt) and webhook-signature (`v1,` + Base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` " +
		"keyed with the Base64-decoded part of the endpoint secret after `whsec_`). Verify it, e.g. with the SDK's client.VerifyWebhook, and reject timestamps older than a few minutes. " +
		"Any 2xx acknowledges; 410 disables the endpoint; anything else, a timeout (10 s) or a redirect is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (each spread by up to ±20 %), later if Retry-After asks (capped at 1 h). " +
		"At most two deliveries to one endpoint are in flight at once. Delivery is at least once: deduplicate on webhook-id. " +
		"data.patient_id is a pseudonym per patient and receiving account: two accounts never get the same one for a patient."
	replies := map[int]openapi.Response{
		http.StatusOK:   {Description: "Any 2xx status acknowledges the event."},
		http.StatusGone: {Description: "The endpoint is gone: it is disabled and gets no more events."},
	}
	return map[string]openapi.Operation{
		"eligibility.verified": {OperationID: "eligibilityVerifiedEvent", Tags: []string{"webhooks"}, Summary: "An eligibility check succeeded",
			Description: desc, Request: webhook.EligibilityVerifiedPayload{}, Responses: replies},
		"prescription.validated": {OperationID: "prescriptionValidatedEvent", Tags: []string{"webhooks"}, Summary: "A prescription was validated",
			Description: desc, Request: webhook.PrescriptionPayload{}, Responses: replies},
		"prescription.approved": {OperationID: "prescriptionApprovedEvent", Tags: []string{"webhooks"}, Summary: "A v1 prescription validation was approved",
			Description: desc, Request: webhook.PrescriptionPayload{}, Responses: replies},
	}
}

// ownerOf is the tenant of an API key: its organization, or else its
// rotation chain. Webhook endpoints and events belong to it.
func ownerOf(k *apikey.Key) string {
	if k.Organization != "" {
		return "org:" + k.Organization
	}
	return "key:" + k.Budget()
}

// webhookCaller returns the registry and the caller's owner id, or answers
// the request itself.
func (s *srv) webhookCaller(w http.ResponseWriter, r *http.Request) (*webhook.Registry, string, bool) {
	k := requestKey(r)
	if k == nil {
		writeDetail(w, http.StatusUnauthorized, detailUnauthorized)
		return nil, "", false
	}
	if s.deps.Webhooks == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return nil, "", false
	}
	return s.deps.Webhooks, ownerOf(k), true
}

func (s *srv) createWebhook(w http.ResponseWriter, r *http.Request) {
	reg, owner, ok := s.webhookCaller(w, r)
	if !ok {
		return
	}
	var req webhook.CreateRequest
	if err := read(w, r, s.opts.maxBody, &req, "url", "events"); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := reg.Create(r.Context(), owner, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

func (s *srv) listWebhooks(w http.ResponseWriter, r *http.Request) {
	reg, owner, ok := s.webhookCaller(w, r)
	if !ok {
		return
	}
	offset, limit, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	es, total, err := reg.List(r.Context(), owner, webhook.ListParams{Offset: offset, Limit: limit})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, WebhookList{Webhooks: es, Total: total, Offset: offset, Limit: limit})
}

func (s *srv) getWebhook(w http.ResponseWriter, r *http.Request) {
	reg, owner, ok := s.webhookCaller(w, r)
	if !ok {
		return
	}
	e, err := reg.Get(r.Context(), owner, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

func (s *srv) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	reg, owner, ok := s.webhookCaller(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if err := reg.Delete(r.Context(), owner, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, WebhookDeleted{ID: id, Deleted: true})
}

func (s *srv) webhookAttempts(w http.ResponseWriter, r *http.Request) {
	reg, owner, ok := s.webhookCaller(w, r)
	if !ok {
		return
	}
	offset, limit, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	as, total, err := reg.Attempts(r.Context(), owner, r.PathValue("id"), webhook.ListParams{Offset: offset, Limit: limit})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, WebhookAttempts{Attempts: as, Total: total, Offset: offset, Limit: limit})
}
