-- Ties the identity to the file it is in (device ?1, inode ?2); with ?3 the
-- store is a copy and gets a new identity.
UPDATE store_identity
SET id = CASE WHEN ?3 THEN lower(hex(randomblob(16))) ELSE id END,
    created_at = CASE WHEN ?3 THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') ELSE created_at END,
    file_dev = ?1, file_ino = ?2;
