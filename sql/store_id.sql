-- This store's identity, and how far the ledger of its own ingests (not its
-- merges) has got: 0 when every cell came from merged stores.
SELECT (SELECT id FROM store_identity),
       (SELECT coalesce(max(id), 0) FROM ingest_ledger WHERE kind <> 'merge');
