-- The store's text encoding (schema.c: fdx's stores are UTF-8).
PRAGMA encoding;
