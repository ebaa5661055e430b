-- What kind of database this is, read in one statement so that a store being
-- created by another process is seen either before or after its creation.
SELECT (SELECT application_id FROM pragma_application_id()),
       (SELECT user_version FROM pragma_user_version()),
       (SELECT count(*) FROM sqlite_schema);
