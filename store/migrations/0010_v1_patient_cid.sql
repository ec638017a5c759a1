-- The IPFS registry keeps a pin while any stored envelope still names its
-- CID (PatientStore.CIDInUse, asked before every unpin): an index lookup,
-- not a scan of the registry.
CREATE INDEX v1_patients_ipfs_cid ON v1_patients (ipfs_cid);
