-- What is wrong with the fdx tables of the current schema, one row per
-- problem (none: the store is as schema.sql makes it). A store on a shared
-- server is as untrusted as an SQLite file from another host: a table replaced
-- by a view, a column of another type or collation, a trigger or a rule would
-- make fdx read something other than cells, so each is refused by name; so
-- is a table that inherits or is inherited (reads take the children's rows,
-- which no upsert's conflict sees) and a view replaced by something else
-- (SQL users read the views). Keys, uniques, foreign keys and checks are
-- compared by kind and columns (a dropped key or check, one made NOT VALID or
-- deferrable, one fdx does not make): the upserts' conflicts need the keys,
-- and the checks keep writers from adding onto forged values. A check's
-- expression is not compared (its text differs between server versions);
-- readers check every row they read.
WITH want (tbl, col, typ, is_c, not_null) AS (VALUES
    ('fdx_meta', 'one', 'integer', false, true),
    ('fdx_meta', 'schema_version', 'integer', false, true),
    ('miss_cell', 'wanted', 'text', true, true),
    ('miss_cell', 'backend', 'text', true, true),
    ('miss_cell', 'op', 'text', true, true),
    ('miss_cell', 'dtypes', 'text', true, true),
    ('miss_cell', 'kernel_source', 'text', true, true),
    ('miss_cell', 'kernel_revision_hash', 'bigint', false, true),
    ('miss_cell', 'cc_major', 'bigint', false, true),
    ('miss_cell', 'cc_minor', 'bigint', false, true),
    ('miss_cell', 'hardware_sku', 'text', true, true),
    ('miss_cell', 'driver_version', 'text', true, true),
    ('miss_cell', 'count', 'bigint', false, true),
    ('miss_cell', 'first_ingest', 'bigint', false, false),
    ('miss_cell', 'last_ingest', 'bigint', false, false),
    ('miss_cell', 'cell_id', 'bigint', false, true),
    ('dispatch_cell', 'keyed', 'bigint', false, true),
    ('dispatch_cell', 'structure_key', 'text', true, true),
    ('dispatch_cell', 'backend', 'text', true, true),
    ('dispatch_cell', 'op', 'text', true, true),
    ('dispatch_cell', 'dtypes', 'text', true, true),
    ('dispatch_cell', 'kernel_source', 'text', true, true),
    ('dispatch_cell', 'kernel_revision_hash', 'bigint', false, true),
    ('dispatch_cell', 'cc_major', 'bigint', false, true),
    ('dispatch_cell', 'cc_minor', 'bigint', false, true),
    ('dispatch_cell', 'hardware_sku', 'text', true, true),
    ('dispatch_cell', 'driver_version', 'text', true, true),
    ('dispatch_cell', 'candidates', 'text', true, true),
    ('dispatch_cell', 'count', 'bigint', false, true),
    ('dispatch_cell', 'first_ingest', 'bigint', false, false),
    ('dispatch_cell', 'last_ingest', 'bigint', false, false),
    ('dispatch_cell', 'candidates_set_at', 'bigint', false, false),
    ('dispatch_cell', 'cell_id', 'bigint', false, true),
    ('ingest_ledger', 'id', 'bigint', false, true),
    ('ingest_ledger', 'run_id', 'text', true, false),
    ('ingest_ledger', 'kind', 'text', false, true),
    ('ingest_ledger', 'content_hash', 'text', false, false),
    ('ingest_ledger', 'sources', 'bigint', false, true),
    ('ingest_ledger', 'bytes', 'bigint', false, true),
    ('ingest_ledger', 'lines', 'bigint', false, true),
    ('ingest_ledger', 'records', 'bigint', false, true),
    ('ingest_ledger', 'skipped', 'bigint', false, true),
    ('ingest_ledger', 'cells_added', 'bigint', false, true),
    ('ingest_ledger', 'cells_updated', 'bigint', false, true),
    ('ingest_ledger', 'committed_at', 'text', false, true),
    ('ingest_ledger', 'captured_at', 'bigint', false, false),
    ('ingest_source', 'ledger_id', 'bigint', false, true),
    ('ingest_source', 'position', 'bigint', false, true),
    ('ingest_source', 'path', 'text', false, true),
    ('ingest_source', 'content_hash', 'text', false, true),
    ('ingest_source', 'bytes', 'bigint', false, true),
    ('ingest_source', 'lines', 'bigint', false, true),
    ('ingest_source', 'records', 'bigint', false, true),
    ('ingest_source', 'skipped', 'bigint', false, true),
    ('store_identity', 'one', 'bigint', false, true),
    ('store_identity', 'id', 'text', false, true),
    ('store_identity', 'created_at', 'text', false, true),
    ('store_identity', 'file_dev', 'bigint', false, false),
    ('store_identity', 'file_ino', 'bigint', false, false),
    ('merged_store', 'store_id', 'text', false, true),
    ('merged_store', 'ledger_high', 'bigint', false, true),
    ('merged_store', 'source', 'text', false, true),
    ('merged_store', 'merged_at', 'text', false, true),
    ('merged_store', 'ledger_digest', 'text', false, false),
    ('merged_store', 'how', 'text', false, false),
    ('history_config', 'one', 'bigint', false, true),
    ('history_config', 'daily_days', 'bigint', false, true),
    ('history_config', 'rolled_before', 'bigint', false, true),
    ('history_config', 'latest_day', 'bigint', false, false),
    ('history_config', 'next_cell_id', 'bigint', false, true),
    ('history_origin', 'id', 'bigint', false, true),
    ('history_origin', 'store_id', 'text', false, true),
    ('cell_history', 'cell', 'bigint', false, true),
    ('cell_history', 'day', 'bigint', false, true),
    ('cell_history', 'origin', 'bigint', false, true),
    ('cell_history', 'count', 'bigint', false, true),
    ('merged_ledger', 'store_id', 'text', false, true),
    ('merged_ledger', 'id', 'bigint', false, true),
    ('merged_ledger', 'run_id', 'text', false, false),
    ('merged_ledger', 'kind', 'text', false, true),
    ('merged_ledger', 'records', 'bigint', false, true),
    ('merged_ledger', 'cells_added', 'bigint', false, true),
    ('merged_ledger', 'cells_updated', 'bigint', false, true),
    ('merged_ledger', 'captured_at', 'bigint', false, false),
    ('merged_ledger', 'committed_at', 'text', false, true),
    ('pruned_cell', 'id', 'bigint', false, true),
    ('pruned_cell', 'kind', 'text', true, true),
    ('pruned_cell', 'keyed', 'bigint', false, true),
    ('pruned_cell', 'token', 'text', true, true),
    ('pruned_cell', 'backend', 'text', true, true),
    ('pruned_cell', 'op', 'text', true, true),
    ('pruned_cell', 'dtypes', 'text', true, true),
    ('pruned_cell', 'kernel_source', 'text', true, true),
    ('pruned_cell', 'kernel_revision_hash', 'bigint', false, true),
    ('pruned_cell', 'cc_major', 'bigint', false, true),
    ('pruned_cell', 'cc_minor', 'bigint', false, true),
    ('pruned_cell', 'hardware_sku', 'text', true, true),
    ('pruned_cell', 'driver_version', 'text', true, true),
    ('pruned_cell', 'cell_id', 'bigint', false, true),
    ('pruned_history', 'cell', 'bigint', false, true),
    ('pruned_history', 'day', 'bigint', false, true),
    ('pruned_history', 'origin', 'bigint', false, true),
    ('pruned_history', 'count', 'bigint', false, true),
    ('prune_log', 'ledger_id', 'bigint', false, true),
    ('prune_log', 'filter', 'text', false, true),
    ('prune_log', 'miss_cells', 'bigint', false, true),
    ('prune_log', 'dispatch_cells', 'bigint', false, true),
    ('prune_log', 'observations', 'bigint', false, true)
),
tables AS (SELECT DISTINCT tbl FROM want),
want_con (tbl, contype, cols) AS (VALUES
    ('fdx_meta', 'p', 'one'), ('fdx_meta', 'c', 'one'),
    ('miss_cell', 'p', 'wanted,kernel_source,kernel_revision_hash,backend,op,dtypes,cc_major,'
                       'cc_minor,hardware_sku,driver_version'),
    ('miss_cell', 'u', 'cell_id'), ('miss_cell', 'c', 'count'), ('miss_cell', 'c', 'cc_major'),
    ('miss_cell', 'c', 'cc_minor'), ('miss_cell', 'c', 'cc_major,cc_minor'),
    ('dispatch_cell', 'p', 'keyed,structure_key,kernel_source,kernel_revision_hash,backend,op,'
                           'dtypes,cc_major,cc_minor,hardware_sku,driver_version'),
    ('dispatch_cell', 'u', 'cell_id'), ('dispatch_cell', 'c', 'count'),
    ('dispatch_cell', 'c', 'keyed'), ('dispatch_cell', 'c', 'keyed,structure_key'),
    ('dispatch_cell', 'c', 'cc_major'), ('dispatch_cell', 'c', 'cc_minor'),
    ('dispatch_cell', 'c', 'cc_major,cc_minor'),
    ('ingest_ledger', 'p', 'id'), ('ingest_ledger', 'u', 'run_id'), ('ingest_ledger', 'c', 'kind'),
    ('ingest_source', 'p', 'ledger_id,position'), ('ingest_source', 'f', 'ledger_id'),
    ('store_identity', 'p', 'one'), ('store_identity', 'c', 'one'),
    ('merged_store', 'p', 'store_id'), ('merged_store', 'c', 'how'),
    ('history_config', 'p', 'one'), ('history_config', 'c', 'one'),
    ('history_config', 'c', 'daily_days'),
    ('history_origin', 'p', 'id'), ('history_origin', 'u', 'store_id'),
    ('history_origin', 'c', 'id'),
    ('cell_history', 'p', 'day,cell,origin'), ('cell_history', 'c', 'count'),
    ('merged_ledger', 'p', 'store_id,id'),
    ('pruned_cell', 'p', 'id'), ('pruned_cell', 'c', 'kind'),
    ('pruned_cell', 'u', 'kind,keyed,token,kernel_source,kernel_revision_hash,backend,op,dtypes,'
                         'cc_major,cc_minor,hardware_sku,driver_version'),
    ('pruned_history', 'p', 'cell,origin,day'), ('pruned_history', 'c', 'count'),
    ('prune_log', 'p', 'ledger_id'), ('prune_log', 'f', 'ledger_id')
),

views (name) AS (VALUES
    ('miss_cells'), ('dispatch_cells'), ('miss_demand'), ('miss_demand_by_device'),
    ('dispatch_candidates'), ('dispatch_regret'), ('miss_daily'), ('dispatch_daily'),
    ('miss_daily_by_store'), ('dispatch_daily_by_store'), ('fleet_ledger'), ('miss_growth_7d')
),
rel AS (
    SELECT c.oid, c.relname, c.relkind
    FROM pg_catalog.pg_class AS c
    WHERE c.relnamespace = current_schema()::regnamespace
      AND c.relname IN (SELECT tbl FROM tables)
),
have AS (
    SELECT r.relname AS tbl, a.attname AS col, format_type(a.atttypid, a.atttypmod) AS typ,
           coalesce(co.collname = 'C' AND co.collnamespace = 'pg_catalog'::regnamespace, false)
               AS is_c, a.attnotnull AS not_null
    FROM rel AS r
    JOIN pg_catalog.pg_attribute AS a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_catalog.pg_collation AS co ON co.oid = a.attcollation
),
have_con AS (
    SELECT r.relname::text AS tbl, c.conname::text AS name, c.contype::text AS contype,
           (SELECT string_agg(a.attname::text, ','
                              ORDER BY CASE WHEN c.contype = 'c' THEN a.attnum ELSE k.ord END)
            FROM unnest(c.conkey) WITH ORDINALITY AS k (num, ord)
            JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = k.num)
               AS cols,
           c.convalidated, c.condeferrable, c.confrelid, c.confdeltype, c.confkey, c.oid
    FROM rel AS r JOIN pg_catalog.pg_constraint AS c ON c.conrelid = r.oid
    WHERE c.contype <> 'n'
),
con_name (contype, label) AS (VALUES
    ('p', 'PRIMARY KEY'), ('u', 'UNIQUE'), ('c', 'CHECK on'), ('f', 'FOREIGN KEY')
)
SELECT 'the table ' || t.tbl || ' is missing'
FROM tables AS t WHERE NOT EXISTS (SELECT 1 FROM rel WHERE relname = t.tbl)
UNION ALL
SELECT r.relname::text || ' is not a plain table (relkind ' || r.relkind::text || ')'
FROM rel AS r WHERE r.relkind <> 'r'
UNION ALL
SELECT 'the column ' || w.tbl || '.' || w.col || ' is missing'
FROM want AS w
WHERE EXISTS (SELECT 1 FROM rel WHERE relname = w.tbl)
  AND NOT EXISTS (SELECT 1 FROM have AS h WHERE h.tbl = w.tbl AND h.col = w.col)
UNION ALL
SELECT 'the column ' || h.tbl || '.' || h.col || ' is ' || h.typ
       || CASE WHEN h.not_null THEN ' NOT NULL' ELSE '' END
       || CASE WHEN h.is_c THEN ' COLLATE "C"' ELSE '' END
       || ', not ' || w.typ || CASE WHEN w.not_null THEN ' NOT NULL' ELSE '' END
       || CASE WHEN w.is_c THEN ' COLLATE "C"' ELSE '' END
FROM have AS h JOIN want AS w ON w.tbl = h.tbl AND w.col = h.col
WHERE (h.typ, h.is_c, h.not_null) IS DISTINCT FROM (w.typ, w.is_c, w.not_null)
UNION ALL
SELECT 'the table ' || h.tbl || ' has a column ' || h.col || ' fdx does not make'
FROM have AS h
WHERE NOT EXISTS (SELECT 1 FROM want AS w WHERE w.tbl = h.tbl AND w.col = h.col)
UNION ALL
SELECT 'the table ' || r.relname::text || ' has a trigger ' || t.tgname
FROM rel AS r JOIN pg_catalog.pg_trigger AS t ON t.tgrelid = r.oid AND NOT t.tgisinternal
UNION ALL
SELECT 'the table ' || r.relname::text || ' has a rule ' || w.rulename
FROM rel AS r JOIN pg_catalog.pg_rewrite AS w ON w.ev_class = r.oid
UNION ALL
SELECT 'the table ' || r.relname::text || ' has row-level security'
FROM rel AS r JOIN pg_catalog.pg_class AS c ON c.oid = r.oid
WHERE c.relrowsecurity
UNION ALL
SELECT 'the table ' || r.relname::text || ' inherits from or is inherited by another table'
FROM rel AS r
WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_inherits AS i
              WHERE i.inhrelid = r.oid OR i.inhparent = r.oid)
UNION ALL
SELECT 'the table ' || w.tbl || ' lacks its ' || n.label || ' (' || w.cols || ')'
FROM want_con AS w JOIN con_name AS n ON n.contype = w.contype
WHERE EXISTS (SELECT 1 FROM rel WHERE relname = w.tbl)
  AND NOT EXISTS (SELECT 1 FROM have_con AS h
                  WHERE (h.tbl, h.contype, h.cols) = (w.tbl, w.contype, w.cols))
UNION ALL
SELECT 'the table ' || h.tbl || ' has a constraint ' || h.name || ' fdx does not make ('
       || pg_catalog.pg_get_constraintdef(h.oid) || ')'
FROM have_con AS h
WHERE NOT EXISTS (SELECT 1 FROM want_con AS w
                  WHERE (w.tbl, w.contype, w.cols) = (h.tbl, h.contype, h.cols))
UNION ALL
SELECT 'the constraint ' || h.name || ' of ' || h.tbl || ' is '
       || CASE WHEN NOT h.convalidated THEN 'NOT VALID' ELSE 'deferrable' END
FROM have_con AS h
WHERE NOT h.convalidated OR h.condeferrable
UNION ALL
SELECT 'the foreign key ' || h.name || ' of ' || h.tbl
       || ' does not refer to ingest_ledger (id) ON DELETE CASCADE'
FROM have_con AS h
WHERE h.contype = 'f'
  AND (h.confdeltype <> 'c' OR cardinality(h.confkey) <> 1
       OR h.confrelid IS DISTINCT FROM (SELECT oid FROM rel WHERE relname = 'ingest_ledger')
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute AS a
                      WHERE a.attrelid = h.confrelid AND a.attnum = h.confkey[1]
                        AND a.attname = 'id'))
UNION ALL
SELECT 'the view ' || v.name || ' is missing or not a view'
FROM views AS v
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class AS c
                  WHERE c.relnamespace = current_schema()::regnamespace
                    AND c.relname = v.name AND c.relkind = 'v');
