-- Fair webhook claims (WebhookStore.Claim): each endpoint's oldest due
-- delivery and its count of leased deliveries are looked up per endpoint,
-- so both must be index range scans that stay short however long one
-- endpoint's backlog grows. The (endpoint_id) index of 0004 is a prefix of
-- the first and goes.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, state, next_at);
CREATE INDEX webhook_deliveries_endpoint_leased ON webhook_deliveries (endpoint_id, state, lease_until);
DROP INDEX webhook_deliveries_endpoint;
