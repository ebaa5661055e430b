-- What else in a store's schema could make fdx's own statements run SQL of
-- the store's or reach another object's pages, as rows shaped like
-- schema_objects.sql's (type, name, tbl_name, sql):
--   * each foreign key of a table ('foreign key', the table, the table it
--     refers to, ''): a table of a user's own whose key refers to one of fdx's
--     would have fdx's deletes cascade into it, and its triggers run;
--   * each name two objects of one type share ('double', name, name, ''),
--     and each b-tree page two objects start at ('shared page', ...): SQLite
--     takes the last such row, so fdx's table would be another's pages;
--   * each object named as SQLite names only its own ('reserved name', ...):
--     a table called sqlite_temp_master is one the pragma above would look for
--     in temp, where SQLite's own has no foreign key; and each named like a
--     table-valued function fdx's statements call (pragma_*, json_each,
--     json_tree), which a virtual table of that name would stand in for: one
--     called pragma_foreign_key_list would answer the query above with nothing.
-- A store SQLite wrote has none of the last three. The pragma is asked about
-- main alone, where the store's tables are.
SELECT 'foreign key', m.name, f."table", ''
FROM sqlite_schema AS m, pragma_foreign_key_list(m.name, 'main') AS f
WHERE m.type = 'table'
UNION ALL
SELECT 'reserved name', name, name, ''
FROM sqlite_schema
WHERE (name LIKE 'sqlite\_%' ESCAPE '\'
       AND NOT (type = 'index' AND name LIKE 'sqlite\_autoindex\_%' ESCAPE '\')
       AND NOT (type = 'table' AND name IN ('sqlite_sequence', 'sqlite_stat1', 'sqlite_stat2',
                                            'sqlite_stat3', 'sqlite_stat4')))
   OR name LIKE 'pragma\_%' ESCAPE '\'
   OR lower(name) IN ('json_each', 'json_tree')
UNION ALL
SELECT 'double', min(name), min(name), ''
FROM sqlite_schema GROUP BY type, lower(name) HAVING count(*) > 1
UNION ALL
SELECT 'shared page', min(name), min(name), ''
FROM sqlite_schema WHERE rootpage > 0 GROUP BY rootpage HAVING count(*) > 1;
