-- fdx-prune: as prune_tomb_miss.sql for a dispatch cell (?1..?11 as
-- dispatch_upsert.sql numbers them, ?12 its cell id).
-- @include pruned_cell_insert

VALUES ('dispatch', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
-- @include pruned_cell_conflict
;
