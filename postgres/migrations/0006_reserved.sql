-- Placeholder for migration 6, which another branch adds (forks); it is
-- replaced by that migration when the branches are merged.
SELECT 1;
