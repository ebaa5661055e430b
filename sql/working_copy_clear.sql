-- A writer's transaction on a backend's working copy (backend.h) starts
-- without cells, as the copy did when the store was opened: the push applies
-- every cell the copy holds, and those of the transactions this handle
-- committed before are the store's already.
DELETE FROM miss_cell;
DELETE FROM dispatch_cell;
DELETE FROM cell_history;
