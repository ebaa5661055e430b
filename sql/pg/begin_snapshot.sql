-- One consistent snapshot for everything a reader pulls.
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
