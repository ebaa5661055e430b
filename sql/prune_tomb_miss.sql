-- fdx-prune: remembers a removed miss cell's key (?1..?10 as miss_upsert.sql
-- numbers them) and its cell id ?11, so that its history is kept as counts
-- already absorbed (see schema_6.sql).
-- @include pruned_cell_insert

VALUES ('miss', 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
-- @include pruned_cell_conflict
;
