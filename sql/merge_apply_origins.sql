-- Apply, step 1: numbers every store the staged history names that this
-- store has no origin number for (this store itself is origin 0). The same
-- text serves PostgreSQL (pg/merge_origins.sql): merge_history is the TEMP
-- table.
INSERT INTO history_origin (id, store_id)
SELECT (SELECT coalesce(max(id), 0) FROM history_origin)
           + row_number() OVER (ORDER BY store_id),
       store_id
FROM (SELECT DISTINCT store_id FROM merge_history
      WHERE store_id <> (SELECT id FROM store_identity)
        AND store_id NOT IN (SELECT store_id FROM history_origin)) AS n;
