-- For the read transaction of an export: map the file instead of reading it
-- page by page (up to SQLite's default ceiling, 2 GiB - 64 KiB, so that a
-- store of a million cells is mapped whole rather than read past 256 MiB),
-- and let the sorter keep more in memory before it spills.
PRAGMA mmap_size = 2147418112;
PRAGMA cache_size = -32768;
