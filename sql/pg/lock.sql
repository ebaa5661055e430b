-- Serialises schema creation between concurrent first writers: held until
-- the transaction ends. The key is "fdx" as an integer.
SELECT pg_advisory_xact_lock(6710904);
