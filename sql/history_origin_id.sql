-- The origin number of a store in this store's history, numbering it when it
-- is new; no row for this store itself (its origin is 0).
INSERT INTO history_origin (id, store_id)
SELECT (SELECT coalesce(max(id), 0) + 1 FROM history_origin), ?1
WHERE ?1 <> (SELECT id FROM store_identity)
ON CONFLICT (store_id) DO UPDATE SET store_id = excluded.store_id
RETURNING id;
