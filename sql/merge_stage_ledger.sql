-- Stages one ledger row of the source or of a store merged into it.
INSERT INTO temp.merge_ledger (store_id, id, run_id, kind, records, cells_added, cells_updated,
                               captured_at, committed_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
ON CONFLICT (store_id, id) DO NOTHING;
