-- Views that make ad-hoc SQL over the cells pleasant in a plain sqlite3 shell
-- (run as part of the schema; see docs/QUERIES.md). Revision hashes (stored
-- with the top bit flipped, see schema_1.sql) appear as 16-digit lowercase
-- hex, dtypes as 'F16,F16', an unkeyed structure key as NULL. Compute
-- capability is cc_major and cc_minor as integers (-1 and -1 for a CPU
-- stamp), for sorting, comparing and joining, and compute_capability as text
-- for display ('8.9', 'cpu'). Counts summed over many cells are exact up to
-- 2^53. History days appear as 'YYYY-MM-DD' (UTC).
DROP VIEW IF EXISTS miss_cells;
DROP VIEW IF EXISTS dispatch_cells;
DROP VIEW IF EXISTS miss_demand;
DROP VIEW IF EXISTS miss_demand_by_device;
DROP VIEW IF EXISTS dispatch_candidates;
DROP VIEW IF EXISTS dispatch_regret;
DROP VIEW IF EXISTS miss_daily;
DROP VIEW IF EXISTS dispatch_daily;
DROP VIEW IF EXISTS miss_daily_by_store;
DROP VIEW IF EXISTS dispatch_daily_by_store;
DROP VIEW IF EXISTS miss_growth_7d;
DROP VIEW IF EXISTS fleet_ledger;

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
SELECT CASE WHEN x.keyed THEN x.structure_key END AS structure_key,
       x.backend AS chosen_backend,
       x.op AS chosen_op,
       coalesce((SELECT group_concat(value, ',') FROM json_each(x.dtypes)), '')
           AS chosen_dtypes,
       x.kernel_source AS chosen_source,
       printf('%016x', x.h) AS chosen_revision,
       x.cc_major,
       x.cc_minor,
       CASE WHEN x.cc_major < 0 THEN 'cpu' ELSE x.cc_major || '.' || x.cc_minor END
           AS compute_capability,
       x.hardware_sku,
       x.driver_version,
       x.count,
       x.position,
       json_extract(x.cand, '$.impl_id.backend') AS backend,
       json_extract(x.cand, '$.impl_id.op') AS op,
       coalesce((SELECT group_concat(value, ',')
                 FROM json_each(x.cand, '$.impl_id.dtypes')), '') AS dtypes,
       json_extract(x.cand, '$.impl_id.kernel_source') AS kernel_source,
       printf('%016x', CASE
           WHEN length(x.u) < 19 OR (length(x.u) = 19 AND x.u <= '9223372036854775807')
               THEN CAST(x.u AS INTEGER)
           ELSE (CAST(substr(x.u, 1, length(x.u) - 9) AS INTEGER) - 18446744072) * 1000000000
                + (CAST(substr(x.u, -9) AS INTEGER) - 1709551616)
       END) AS kernel_revision,
       json_extract(x.cand, '$.latency_ns') AS latency_ns,
       (json_extract(x.cand, '$.impl_id.backend') = x.backend
        AND json_extract(x.cand, '$.impl_id.op') = x.op
        AND (x.cand -> '$.impl_id.dtypes') = x.dtypes
        AND json_extract(x.cand, '$.impl_id.kernel_source') = x.kernel_source
        AND x.u = CASE WHEN x.h >= 0
                       THEN CAST(x.h AS TEXT)
                       ELSE printf('%d%09d',
                                   18446744073 + x.h / 1000000000
                                   - (709551616 + x.h % 1000000000 < 0),
                                   (709551616 + x.h % 1000000000 + 1000000000) % 1000000000)
                  END) AS is_chosen
FROM (SELECT d.*, c.key AS position, c.value AS cand,
             c.value -> '$.impl_id.kernel_revision_hash' AS u,
             ((d.kernel_revision_hash | -9223372036854775808) & ~(d.kernel_revision_hash & -9223372036854775808)) AS h
      FROM dispatch_cell AS d, json_each(d.candidates) AS c) AS x;

-- Dispatch cells where a measured candidate beat the measured chosen
-- implementation: where the runtime picked wrong, and by how much.
CREATE VIEW dispatch_regret AS
WITH measured AS (
    SELECT * FROM dispatch_candidates WHERE latency_ns IS NOT NULL
),
chosen AS (
    SELECT structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
           chosen_revision, cc_major, cc_minor, compute_capability, hardware_sku,
           driver_version, count, min(latency_ns) AS chosen_ns
    FROM measured WHERE is_chosen
    GROUP BY structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
             chosen_revision, compute_capability, hardware_sku, driver_version
),
best AS (
    SELECT structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
           chosen_revision, cc_major, cc_minor, compute_capability, hardware_sku,
           driver_version, min(latency_ns) AS best_ns, backend AS best_backend, kernel_source AS best_source,
           kernel_revision AS best_revision
    FROM measured WHERE NOT is_chosen
    GROUP BY structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
             chosen_revision, compute_capability, hardware_sku, driver_version
)
SELECT c.structure_key, c.chosen_backend, c.chosen_op, c.chosen_dtypes, c.chosen_source,
       c.chosen_revision, c.cc_major, c.cc_minor, c.compute_capability, c.hardware_sku,
       c.driver_version, c.count,
       c.chosen_ns, b.best_ns, b.best_backend, b.best_source, b.best_revision,
       round(CAST(c.chosen_ns AS REAL) / b.best_ns, 3) AS speedup
FROM chosen AS c
JOIN best AS b
  ON b.structure_key IS c.structure_key AND b.chosen_backend = c.chosen_backend
 AND b.chosen_op = c.chosen_op AND b.chosen_dtypes = c.chosen_dtypes
 AND b.chosen_source = c.chosen_source AND b.chosen_revision = c.chosen_revision
 AND b.compute_capability = c.compute_capability AND b.hardware_sku = c.hardware_sku
 AND b.driver_version = c.driver_version
WHERE b.best_ns < c.chosen_ns
ORDER BY speedup DESC, c.structure_key;

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

