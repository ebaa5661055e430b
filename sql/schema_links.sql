-- What else in a store's schema could make fdx's own statements run SQL of
-- the store's or reach another object's pages, as rows shaped like
-- schema_objects.sql's (type, name, tbl_name, sql):
--   * each foreign key of a table ('foreign key', the table, the table it
--     refers to, ''): a table of a user's own whose key refers to one of fdx's
--     would have fdx's deletes cascade into it, and its triggers run;
--   * each name two objects of one type share ('double', name, name, ''),
--     and each b-tree page two objects start at ('shared page', ...): SQLite
--     takes the last such row, so fdx's table would be another's pages.
-- A store SQLite wrote has no doubles and no shared page.
SELECT 'foreign key', m.name, f."table", ''
FROM sqlite_schema AS m, pragma_foreign_key_list(m.name) AS f
WHERE m.type = 'table'
UNION ALL
SELECT 'double', min(name), min(name), ''
FROM sqlite_schema GROUP BY type, lower(name) HAVING count(*) > 1
UNION ALL
SELECT 'shared page', min(name), min(name), ''
FROM sqlite_schema WHERE rootpage > 0 GROUP BY rootpage HAVING count(*) > 1;
