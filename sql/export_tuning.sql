-- For the read transaction of an export: map the file instead of reading it
-- page by page, and let the sorter keep more in memory before it spills.
PRAGMA mmap_size = 268435456;
PRAGMA cache_size = -32768;
