SAVEPOINT fdx_ingest;
