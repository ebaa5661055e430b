-- Every object of a store's schema, to compare with the schema fdx creates
-- before anything else is read from the store.
SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name;
