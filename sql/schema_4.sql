-- Schema version 4: what lets fdx-merge prove that a store it merged before
-- is unchanged, and tell a copied store from its original.
--
-- store_identity.file_dev / file_ino: the device and inode of the file the
-- identity belongs to. A write transaction in a file that is not that one
-- (a copy, a restored backup) first gives the store a new identity and
-- records the old one in merged_store as 'copied'. NULL until a writer
-- first opens the store with this version.
ALTER TABLE store_identity ADD COLUMN file_dev INTEGER;
ALTER TABLE store_identity ADD COLUMN file_ino INTEGER;

-- merged_store.ledger_digest: SHA-256 (hex) over that store's ingest_ledger
-- rows up to ledger_high, in id order, as fdx read them (NULL: recorded by an
-- older fdx, or claimed by a store that did not know it).
-- merged_store.how: 'read' when this store read that store's own ledger (the
-- only rows that let a later merge of it be skipped as a repeat), 'held' when
-- a merged store listed it among its own merged stores (a claim, which can
-- only make a merge be refused), 'copied' when this store's file is a copy
-- of it (see above); NULL for rows older than version 4.
ALTER TABLE merged_store ADD COLUMN ledger_digest TEXT;
ALTER TABLE merged_store ADD COLUMN how TEXT CHECK (how IN ('read', 'held', 'copied'));

PRAGMA user_version = 4;
