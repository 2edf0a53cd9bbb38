package synclog

// Conflict is a conflict fork as a store holds it (see PlanAppend): a
// chain of messages that another host's, appended at the same place in
// the same session at the same time, took the session from.
type Conflict struct {
	// ID and Title are the conflict fork's; Session and SessionTitle
	// the session it split from.
	ID           string `json:"id"`
	Title        string `json:"title"`
	Session      string `json:"session"`
	SessionTitle string `json:"session_title"`
	// Host wrote the fork's first own message.
	Host HostID `json:"-"`
}
