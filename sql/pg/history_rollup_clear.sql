-- Drops the daily rows of days $1 ..< $2 that history_rollup.sql summed.
DELETE FROM cell_history
WHERE day >= $1::bigint AND day < $2::bigint
  AND day <> (date_trunc('month', date '1970-01-01' + day::integer)::date
              - date '1970-01-01')::bigint;
