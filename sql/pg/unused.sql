-- Whether the store a first writer made is still unused (1): no ledger row,
-- so no write was ever committed in it, and no cell. The tables are locked
-- first, so that a writer committing into it meanwhile is waited for and seen.
LOCK TABLE ingest_ledger, miss_cell, dispatch_cell IN ACCESS EXCLUSIVE MODE;
SELECT (NOT EXISTS (SELECT 1 FROM ingest_ledger) AND NOT EXISTS (SELECT 1 FROM miss_cell)
        AND NOT EXISTS (SELECT 1 FROM dispatch_cell))::int;
