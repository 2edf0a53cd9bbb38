package query

// ProjectSessions returns the WHERE and ORDER BY of a user's sessions of
// one project, the live ones (archived included) newest first, then the
// trashed ones newest first, and their arguments: what a project move
// reads (sessionstore.SessionSteps.ProjectSessions).
func ProjectSessions(d Dialect, userID, projectID string) (string, []any) {
	c := New(d)
	c.Add("s.user_id = "+d.equal(), userID)
	c.Add("s.project_id = "+d.equal(), projectID)
	return "WHERE " + c.String() + " ORDER BY s.deleted_at IS NOT NULL, s.updated_at DESC, s.id DESC", c.Args
}
