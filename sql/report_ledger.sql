-- fdx-report's ledger summary, over the ledger tables (a store's views are
-- not trusted): ingests, distinct run ids, stores (hosts), the capture days
-- spanned, records read, and the cells held. The same as fleet_ledger's.
WITH l AS (
    SELECT (SELECT id FROM store_identity) AS store, run_id, records, captured_at
    FROM ingest_ledger
    UNION ALL
    SELECT store_id, run_id, records, captured_at FROM merged_ledger
)
SELECT count(*),
       count(DISTINCT run_id),
       count(DISTINCT store),
       date(min(captured_at), 'unixepoch'),
       date(max(captured_at), 'unixepoch'),
       CASE WHEN sum(records >> 32) + (sum(records & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(records >> 32) + (sum(records & 4294967295) >> 32)) << 32)
                 + (sum(records & 4294967295) & 4294967295) END,
       (SELECT count(*) FROM miss_cell),
       (SELECT count(*) FROM dispatch_cell)
FROM l;
