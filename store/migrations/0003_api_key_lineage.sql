-- API keys: the rotation chain a key belongs to (package apikey counts rate
-- limits and quotas per lineage, so rotating a key does not reset them).
ALTER TABLE api_keys ADD COLUMN lineage TEXT NOT NULL DEFAULT '';
UPDATE api_keys SET lineage = id WHERE lineage = '';
