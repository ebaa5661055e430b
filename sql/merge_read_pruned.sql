-- The pruned history of the cells a store being merged holds again (pruned,
-- then observed anew), under the live cell's id, a cell's rows together:
-- the id, the bucket, the origin and the count. A merge compares what the
-- source observed of a key with what the target holds of it, live and
-- pruned; a source's own count of a key it pruned and holds again is its
-- live history plus these rows. A tombstone matches as a merge target's
-- matches a staged cell (merge_apply_targets.sql: a miss's keyed is 1).
SELECT c.cell_id, h.day, h.origin, h.count
FROM pruned_cell AS p
JOIN miss_cell AS c ON p.keyed = 1 AND c.wanted = p.token
-- @include pruned_key_match

JOIN pruned_history AS h ON h.cell = p.id
WHERE p.kind = 'miss'
UNION ALL
SELECT c.cell_id, h.day, h.origin, h.count
FROM pruned_cell AS p
JOIN dispatch_cell AS c ON c.keyed = p.keyed AND c.structure_key = p.token
-- @include pruned_key_match

JOIN pruned_history AS h ON h.cell = p.id
WHERE p.kind = 'dispatch'
ORDER BY 1;
