-- Views that make ad-hoc SQL over the cells pleasant in a plain sqlite3 shell
-- (run as part of the schema; see docs/QUERIES.md). Revision hashes (stored
-- with the top bit flipped, see schema_1.sql) appear as 16-digit lowercase
-- hex, dtypes as 'F16,F16', an unkeyed structure key as NULL. Compute
-- capability is cc_major and cc_minor as integers (-1 and -1 for a CPU
-- stamp), for sorting, comparing and joining, and compute_capability as text
-- for display ('8.9', 'cpu'). Counts summed over many cells are exact up to
-- 2^53. History days appear as 'YYYY-MM-DD' (UTC).
-- @include views_drop

CREATE VIEW miss_cells AS
SELECT wanted,
       backend,
       op,
       coalesce((SELECT group_concat(value, ',') FROM json_each(m.dtypes)), '') AS dtypes,
       kernel_source,
       printf('%016x', (kernel_revision_hash | -9223372036854775808)
                       & ~(kernel_revision_hash & -9223372036854775808)) AS kernel_revision,
       cc_major,
       cc_minor,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END
           AS compute_capability,
       hardware_sku,
       driver_version,
       count,
       first_ingest,
       last_ingest,
       cell_id
FROM miss_cell AS m;

CREATE VIEW dispatch_cells AS
SELECT CASE WHEN keyed THEN structure_key END AS structure_key,
       backend,
       op,
       coalesce((SELECT group_concat(value, ',') FROM json_each(d.dtypes)), '') AS dtypes,
       kernel_source,
       printf('%016x', (kernel_revision_hash | -9223372036854775808)
                       & ~(kernel_revision_hash & -9223372036854775808)) AS kernel_revision,
       cc_major,
       cc_minor,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END
           AS compute_capability,
       hardware_sku,
       driver_version,
       json_array_length(candidates) AS candidates,
       count,
       first_ingest,
       last_ingest,
       cell_id
FROM dispatch_cell AS d;

-- What to write next: demand per wanted structure key.
CREATE VIEW miss_demand AS
SELECT wanted,
       CAST(total(count) AS INTEGER) AS misses,
       count(DISTINCT json_array(backend, op, dtypes, kernel_source, kernel_revision_hash))
           AS fallbacks,
       count(DISTINCT json_array(cc_major, cc_minor, hardware_sku, driver_version)) AS devices,
       count(*) AS cells,
       group_concat(DISTINCT op) AS ops
FROM miss_cell
GROUP BY wanted
ORDER BY misses DESC, wanted;

-- The same, per device class (compute capability and SKU).
CREATE VIEW miss_demand_by_device AS
SELECT wanted,
       cc_major,
       cc_minor,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END
           AS compute_capability,
       hardware_sku,
       CAST(total(count) AS INTEGER) AS misses,
       count(DISTINCT json_array(backend, op, dtypes, kernel_source, kernel_revision_hash))
           AS fallbacks,
       count(*) AS cells
FROM miss_cell
GROUP BY wanted, cc_major, cc_minor, hardware_sku
ORDER BY misses DESC, wanted, cc_major, cc_minor, hardware_sku;

-- One row per candidate of every dispatch cell. A candidate is the chosen
-- implementation when all five ImplId fields match; the hash is compared as
-- the unsigned decimal text the candidates JSON holds.
CREATE VIEW dispatch_candidates AS
-- @include regret_candidates
;

-- Dispatch cells where a measured candidate beat the measured chosen
-- implementation: where the runtime picked wrong, and by how much.
CREATE VIEW dispatch_regret AS
-- @include regret_rows
;

-- History. A cell's saturating sum of counts over its rows is its total;
-- `span` says whether a row is a day or, before the daily window, a month
-- bucket (its `day` the month's first). Counts from several stores (after a
-- merge) add as two 32-bit halves, saturating at 2^63-1, never overflowing.

-- One row per (day, miss cell): the observations added that day.
CREATE VIEW miss_daily AS
SELECT date(h.day * 86400, 'unixepoch') AS day,
       CASE WHEN h.day < (SELECT rolled_before FROM history_config) THEN 'month' ELSE 'day' END
           AS span,
       c.wanted, c.backend, c.op, c.dtypes, c.kernel_source, c.kernel_revision, c.cc_major,
       c.cc_minor, c.compute_capability, c.hardware_sku, c.driver_version,
       CASE WHEN sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32)) << 32)
                 + (sum(h.count & 4294967295) & 4294967295) END AS count
FROM miss_cells AS c
JOIN cell_history AS h ON h.cell = c.cell_id
GROUP BY c.cell_id, h.day;

-- One row per (day, dispatch cell).
CREATE VIEW dispatch_daily AS
SELECT date(h.day * 86400, 'unixepoch') AS day,
       CASE WHEN h.day < (SELECT rolled_before FROM history_config) THEN 'month' ELSE 'day' END
           AS span,
       c.structure_key, c.backend, c.op, c.dtypes, c.kernel_source, c.kernel_revision,
       c.cc_major, c.cc_minor, c.compute_capability, c.hardware_sku, c.driver_version,
       c.candidates,
       CASE WHEN sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32)) << 32)
                 + (sum(h.count & 4294967295) & 4294967295) END AS count
FROM dispatch_cells AS c
JOIN cell_history AS h ON h.cell = c.cell_id
GROUP BY c.cell_id, h.day;

-- The same per store that brought the observations: `store` is the
-- store_identity id of this store for its own ingests, or of the host store a
-- merge brought them from (fleet_ledger says which runs that store ingested).
CREATE VIEW miss_daily_by_store AS
SELECT date(h.day * 86400, 'unixepoch') AS day,
       CASE WHEN h.origin = 0 THEN (SELECT id FROM store_identity)
            ELSE (SELECT store_id FROM history_origin WHERE id = h.origin) END AS store,
       c.wanted, c.backend, c.op, c.dtypes, c.kernel_source, c.kernel_revision, c.cc_major,
       c.cc_minor, c.compute_capability, c.hardware_sku, c.driver_version, h.count
FROM miss_cells AS c
JOIN cell_history AS h ON h.cell = c.cell_id;

CREATE VIEW dispatch_daily_by_store AS
SELECT date(h.day * 86400, 'unixepoch') AS day,
       CASE WHEN h.origin = 0 THEN (SELECT id FROM store_identity)
            ELSE (SELECT store_id FROM history_origin WHERE id = h.origin) END AS store,
       c.structure_key, c.backend, c.op, c.dtypes, c.kernel_source, c.kernel_revision,
       c.cc_major, c.cc_minor, c.compute_capability, c.hardware_sku, c.driver_version, h.count
FROM dispatch_cells AS c
JOIN cell_history AS h ON h.cell = c.cell_id;

-- Every ingest this store holds the data of: its own ledger and the ledgers
-- of the stores merged into it, with the capture day of each.
CREATE VIEW fleet_ledger AS
SELECT (SELECT id FROM store_identity) AS store, id, run_id, kind, records, cells_added,
       cells_updated, date(captured_at, 'unixepoch') AS day,
       strftime('%Y-%m-%dT%H:%M:%SZ', captured_at, 'unixepoch') AS captured_at, committed_at
FROM ingest_ledger
UNION ALL
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated,
       date(captured_at, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%SZ', captured_at, 'unixepoch'),
       committed_at
FROM merged_ledger;

-- Demand growth per wanted key: misses in the last 7 days of the history
-- (ending with its latest day) against the 7 days before; is_new when the
-- key had no misses before the window. fdx-top --growth 7d ranks the same.
CREATE VIEW miss_growth_7d AS
WITH w AS (SELECT latest_day - 6 AS lo FROM history_config),
per AS (
    SELECT c.wanted,
           total(CASE WHEN h.day >= w.lo THEN h.count END) AS recent,
           total(CASE WHEN h.day >= w.lo - 7 AND h.day < w.lo THEN h.count END) AS previous,
           total(CASE WHEN h.day < w.lo THEN h.count END) AS before
    FROM miss_cell AS c
    JOIN cell_history AS h ON h.cell = c.cell_id, w
    GROUP BY c.wanted
)
SELECT wanted,
       CAST(recent AS INTEGER) AS misses,
       CAST(previous AS INTEGER) AS previous,
       CAST(recent AS INTEGER) - CAST(previous AS INTEGER) AS growth,
       before = 0 AS is_new
FROM per
WHERE recent > 0 OR previous > 0
ORDER BY growth DESC, misses DESC, wanted;

