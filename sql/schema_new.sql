-- A store made from the schema image (schema.c) instead of by the migrations,
-- in a file that held nothing: after the image's objects, the rows and
-- settings the migrations leave in such a store. The user_version is the
-- last migration's; a test compares the two ways of making a store.
PRAGMA application_id = 1717860401;
-- @include identity_new

-- @include history_config_new

PRAGMA user_version = 7;
