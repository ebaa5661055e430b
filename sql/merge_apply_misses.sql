-- Apply, step 9: the miss cells this store had that gain observations
-- (saturating at 2^63-1); ?1 is the ledger id of the transaction.
UPDATE miss_cell SET
    count = CASE
        WHEN count > 9223372036854775807 - c.gain THEN 9223372036854775807
        ELSE count + c.gain
    END,
    last_ingest = ?1
FROM temp.merge_cell AS c
WHERE c.kind = 'miss' AND c.added = 0 AND c.gain > 0 AND miss_cell.cell_id = c.target;
