-- For the read transaction of an export: pages are read through a 4 MiB
-- cache, not mapped. Mapping the file (mmap_size) took the same time on
-- stores of 1,000,000 and 5,000,000 cells, but every page it reached stayed
-- in the process's resident set: 348 MiB and 1.7 GiB, against 38 MiB read
-- page by page through a 32 MiB cache. The export reads each leaf once, in
-- key order, so a cache larger than the trees' upper levels only costs the
-- page faults of filling it: 4 MiB took a tenth less time than 32 MiB and
-- holds 10 MiB (docs/PERFORMANCE.md). mmap_size is set so that a SQLite
-- built to map by default does not.
PRAGMA mmap_size = 0;
PRAGMA cache_size = -4096;
