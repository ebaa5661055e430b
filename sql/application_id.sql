PRAGMA application_id;
