-- Whether a source merged earlier in this transaction, and kept for the push
-- (pgm_keep.sql), is this very ledger: store ?1 read at position ?2 with
-- digest ?3. A PostgreSQL target's working copy holds no merged_store row of
-- it until the push, so this is what tells it a source given twice.
SELECT EXISTS (SELECT 1 FROM temp.pgm_store
               WHERE store_id = ?1 AND ledger_high = ?2 AND ledger_digest = ?3
                 AND how = 'read');
