-- The values each fdx-top filter can match, for saying which exist when a
-- filter matches nothing: (filter, value), each filter's values in order.
SELECT DISTINCT 'cc', CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END
FROM miss_cell
UNION
SELECT DISTINCT 'sku', hardware_sku FROM miss_cell
UNION
SELECT DISTINCT 'op', op FROM miss_cell
UNION
SELECT DISTINCT 'source', kernel_source FROM miss_cell
ORDER BY 1, 2;
