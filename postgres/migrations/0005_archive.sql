-- When a session was archived: hidden from lists, the picker and default
-- searches, kept until it is deleted. NULL for a session that is not.
ALTER TABLE sessions ADD COLUMN archived_at timestamptz;
