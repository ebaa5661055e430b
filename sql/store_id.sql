-- This store's identity, and the device and inode of the file it was given in.
SELECT id, file_dev, file_ino FROM store_identity;
