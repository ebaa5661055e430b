-- Takes the merge's turn for one origin store ($1: the first 16 hex digits of
-- its identity as a signed 64-bit number), until the transaction ends.
SELECT pg_advisory_xact_lock($1::bigint);
