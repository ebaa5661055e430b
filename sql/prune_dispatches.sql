-- fdx-prune: removes the dispatch cells that pass every filter given (a NULL
-- parameter does not filter): :driver, :revision (16 hex digits, as the views
-- show it), :source, :op, :cc ('8.9' or 'cpu'), :sku, and :before
-- ('YYYY-MM-DD': cells with no observation on that day or later).
-- Returns each removed cell's key (as the export queries order it), count
-- and id.
DELETE FROM dispatch_cell
-- @include prune_filter

RETURNING keyed, structure_key, backend, op, dtypes, kernel_source, kernel_revision_hash,
          cc_major, cc_minor, hardware_sku, driver_version, count, cell_id;
