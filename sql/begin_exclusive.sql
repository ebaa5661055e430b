-- The lock under which a writer empties again a file it made its store in
-- (it failed before its first commit): no reader may be reading the file
-- while it is cut to nothing, which read a torn store ("disk I/O error", "no
-- such table").
BEGIN EXCLUSIVE;
