-- The body of the dispatch_candidates view (views.sql), shared with
-- report_regret.sql, which cannot trust a store's views. Not run alone.
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
                  END) AS is_chosen,
       x.cell_id
FROM (SELECT d.*, c.key AS position, c.value AS cand,
             c.value -> '$.impl_id.kernel_revision_hash' AS u,
             ((d.kernel_revision_hash | -9223372036854775808) & ~(d.kernel_revision_hash & -9223372036854775808)) AS h
      FROM dispatch_cell AS d, json_each(d.candidates) AS c) AS x
