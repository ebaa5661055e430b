-- The stores whose history a store being merged holds, by number: 0 is the
-- store itself.
SELECT 0, (SELECT id FROM store_identity)
UNION ALL
SELECT id, store_id FROM history_origin
ORDER BY 1;
