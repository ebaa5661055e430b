-- Apply, step 9 (../merge_apply_misses.sql): the miss cells this store had
-- that gain observations (saturating); $1 is the ledger id of the push.
UPDATE miss_cell AS m SET
    count = least(m.count::numeric + c.gain, 9223372036854775807)::bigint,
    last_ingest = $1::bigint
FROM merge_cell AS c
WHERE c.kind = 'miss' AND c.added = 0 AND c.gain > 0 AND m.cell_id = c.target;
