package realcorpus

import (
	"encoding/json"
	"slices"
)

// Secret is one synthetic secret and the ways it can be written down.
// Carriers choose among the ways: a carrier that writes NAME=value
// needs Name, one that sends a header needs Header, and so on.
type Secret struct {
	Kind string
	// Value is the secret itself; every line of it of 8 characters or
	// more must be gone once the message is redacted.
	Value string
	// Name is what a project calls it in its environment
	// (OPENAI_API_KEY), Assign what is assigned to that name: the value,
	// or a URL or connection string holding it.
	Name, Assign string
	// Header is an HTTP header line carrying it; Bearer marks a token
	// that can be sent as "Authorization: Bearer …".
	Header string
	Bearer bool
	// Command is a shell command carrying it.
	Command string
	// URL is a URL carrying it.
	URL string
	// Block is text in its own file's format, File that file's name and
	// Lang the fence language to show it with.
	Block, File, Lang string
	// Extra are more strings that must be gone: the base64 forms of the
	// value that its own format holds.
	Extra []string
	// B64 are the decoded values whose base64 must not survive
	// anywhere: a reader decodes what is left.
	B64 []string
}

// Kind is one kind of secret and how to make one.
type Kind struct {
	ID    string
	Group string
	Make  func(g *Gen) Secret
}

func named(kind, name, v string) Secret {
	return Secret{Kind: kind, Value: v, Name: name, Assign: v}
}

func token(kind, name, v string) Secret {
	s := named(kind, name, v)
	s.Bearer = true
	return s
}

func (s Secret) with(f func(*Secret)) Secret { f(&s); return s }

func jsonIndent(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// Kinds are every kind of secret the corpus holds.
var Kinds = slices.Concat(cloudKinds, hostingKinds, aiKinds, saasKinds, genericKinds, contextKinds)
