-- A new store's page size, set before its first page is written: a store
-- keeps the size it was made with (SQLite changes it only by rewriting the
-- file), so an older store keeps its 4 KiB. 8 KiB pages halve the pages, and
-- the system calls and page-cache work each costs, of a new store's first
-- commit and of a flush into a large store, where every new cell touches a
-- leaf of its own; 16 KiB wrote more bytes a touched leaf than that saved
-- (docs/PERFORMANCE.md, "Pages of 8 KiB").
PRAGMA page_size = 8192;
