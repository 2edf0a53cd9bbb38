package secrets_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fake"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

const (
	gateToken = "P4hfXk29sLmZ8vXq4rT7yN2pWbC5dE6f"
	gateKey   = "sk-proj-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8"
	gatePEM   = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7h\nJ8Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8Zq8mN3kL9x\n-----END RSA PRIVATE KEY-----"
)

// gateStore is a store holding a session whose title is cut in the
// middle of a key, a prompt with an Authorization header, and a tool
// result holding a private key and a password next to &.
func gateStore(t *testing.T) (loom.Store, *loom.Session) {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	s := &loom.Session{ID: loom.NewID(), Key: "cli:gate", UserID: "u", Surface: "cli"}
	prompt := "deploy with " + gateKey + " then call the api"
	s.Title = loom.TitleFrom(prompt)
	out, _ := json.Marshal("curl -v\n> Authorization: Bearer " + gateToken + "\n" + gatePEM + "\nDATABASE_URL=mysql://app:pa&ss9x2Q@db:3306/shop\n")
	in, _ := json.Marshal(map[string]string{"command": "cat deploy.env"})
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: prompt + "\nAuthorization: Bearer " + gateToken}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolCompleted, Input: in, Output: out}}},
	}
	if err := st.Append(ctx, s, msgs...); err != nil {
		t.Fatal(err)
	}
	return st, s
}

// openStore opens a new SQLite store, closed when the test ends.
func openStore(t *testing.T) loom.Engine {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "loom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// engineBelow is one value that provides every read service of
// loom.Reads and more (the vectors' writes), as an engine's store does:
// a gate that handed it on would hand on more than the service.
type engineBelow struct {
	*fake.VectorStore
	*fake.ActivityReader
	*fake.IndexSizer
}

// everyRead is a store that has every read service of loom.Reads, each
// faked: what a gate hands on of them is told by its type, and nothing
// is read.
func everyRead() *fake.Reader {
	below := engineBelow{&fake.VectorStore{}, &fake.ActivityReader{}, &fake.IndexSizer{}}
	reads := loom.Reads{Vectors: below, Activity: below, IndexSize: below}
	return &fake.Reader{ReadsFn: func() loom.Reads { return reads }}
}

// leaks fails the test where what a gate read, as JSON, holds any of the
// gate store's secrets; it returns that JSON.
func leaks(t *testing.T, what string, read any) string {
	t.Helper()
	b, err := json.Marshal(read)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, v := range []string{gateToken, "Zq8mN3kL9xT2", "MIIEowIBAAKC", "q8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7h", "pa&ss9x2Q", `pa\u0026ss9x2Q`} {
		if strings.Contains(text, v) {
			t.Errorf("%s leaks %q: %s", what, v, text)
		}
	}
	return text
}

// A search through the gate makes its snippets from the redacted text:
// the query's words are highlighted around the markers, never inside a
// secret that highlighting would have broken apart.
func TestGateSearchRedactsBeforeHighlighting(t *testing.T) {
	st, s := gateStore(t)
	g := secrets.Default().Gate(st)
	ctx := context.Background()
	for _, q := range []string{"Authorization Bearer", "BEGIN RSA PRIVATE KEY", "mysql app shop", gateToken, "deploy"} {
		hits, err := g.Search(ctx, loom.SearchQuery{Text: q, UserID: "u"})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Errorf("%q: no hits", q)
		}
		if text := leaks(t, "search "+q, hits); strings.Contains(text, "\uE000") {
			t.Errorf("search %q shows the gate's mark: %s", q, text)
		}
	}
	if g.Redacted() == 0 {
		t.Error("the gate counted nothing")
	}
	// Without the gate the same search shows them: the test can fail.
	hits, _ := st.Search(ctx, loom.SearchQuery{Text: "Authorization Bearer", UserID: "u"})
	if b, _ := json.Marshal(hits); !strings.Contains(string(b), "P4hf") {
		t.Errorf("the store's own search shows no secret: %s", b)
	}
	_ = s
}

// Every read through the gate comes out redacted: sessions (the title
// cut in the middle of a key), listings, messages, windows of them,
// errors naming candidates.
func TestGateReadsAreRedacted(t *testing.T) {
	st, s := gateStore(t)
	g := secrets.Default().Gate(st)
	ctx := context.Background()
	got, err := g.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	leaks(t, "session", got)
	list, _ := g.Sessions(ctx, loom.SessionFilter{UserID: "u"})
	leaks(t, "sessions", list)
	sums, _ := g.Summaries(ctx, loom.SessionFilter{UserID: "u"})
	leaks(t, "summaries", sums)
	msgs, _ := g.Messages(ctx, s.ID, loom.MessageQuery{})
	leaks(t, "messages", msgs)
	data, _ := g.ReadSessions(ctx, []string{s.ID}, loom.MessageQuery{Limit: 1})
	leaks(t, "read sessions", data)
	rep, _ := g.Usage(ctx, loom.UsageFilter{UserID: "u"})
	leaks(t, "usage", rep)
	// Without the gate the store holds them.
	raw, _ := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if b, _ := json.Marshal(raw); !strings.Contains(string(b), gateToken) {
		t.Fatal("the store holds no secret")
	}
	if !strings.Contains(s.Title, "Zq8mN3") {
		t.Fatalf("the title %q does not hold the start of the key", s.Title)
	}
}

// The gate embeds no store: every method of loom.Store is the gate's
// own, so one added to loom.Store does not compile until the gate says
// how it reads.
func TestGateEmbedsNoStore(t *testing.T) {
	typ := reflect.TypeFor[secrets.Gate]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Anonymous {
			t.Errorf("secrets.Gate embeds %s: a method of it added later would pass through the gate unredacted", f.Type)
		}
	}
}

// TestGateDecidesEveryService holds each service of loom.Reads to what
// the gate decided for it (Gate.Reads): each is read through the gate,
// never the store's own handed on. A service added to loom.Reads fails
// here until it is decided.
func TestGateDecidesEveryService(t *testing.T) {
	gated := map[string]bool{"Vectors": true, "Activity": true, "IndexSize": true}

	gatePkg := reflect.TypeFor[secrets.Gate]().PkgPath()
	st := everyRead()
	g := secrets.Default().Gate(st)
	below, through := reflect.ValueOf(st.Reads()), reflect.ValueOf(g.Reads())
	typ := below.Type()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		b, v := below.Field(i), through.Field(i)
		switch {
		case gated[name]:
			if b.IsNil() {
				t.Errorf("%s: the store below has none, so the test cannot tell whether the gate reads it", name)
			} else if v.IsNil() || v.Interface() == b.Interface() || v.Elem().Type().PkgPath() != gatePkg {
				t.Errorf("%s is read through the gate by decision, but the gate hands on %v", name, v)
			}
		default:
			t.Errorf("loom.Reads.%s is new: decide in secrets.Gate.Reads how it is read through the gate, and say so here", name)
		}
	}
	if none := secrets.Default().Gate(nil).Reads(); none != (loom.Reads{}) {
		t.Errorf("a gate over no store has read services: %+v", none)
	}
}

// gateOwn are the methods of the gate that are none of loom.Reader's:
// what it redacts that is read from elsewhere than the store, and what
// it says of itself.
var gateOwn = map[string]bool{"Text": true, "Lines": true, "Redacted": true, "Detector": true}

// TestGateIsAReaderOnly lists every method of what Detector.Gate
// returns, and of each read service it hands on (Gate.Reads): each is a
// method of loom.Reader (of the service's interface), or one of the
// gate's own helpers. A way out handed a gate can call no write of
// loom.Store and reach no service the gate does not read through.
func TestGateIsAReaderOnly(t *testing.T) {
	reader := reflect.TypeFor[loom.Reader]()
	store := reflect.TypeFor[loom.Store]()
	engine := reflect.TypeFor[loom.Engine]()
	g := secrets.Default().Gate(everyRead())
	typ := reflect.TypeOf(g)
	if typ.NumMethod() != reader.NumMethod()+len(gateOwn) {
		t.Errorf("the gate has %d methods, want loom.Reader's %d and its own %d", typ.NumMethod(), reader.NumMethod(), len(gateOwn))
	}
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if _, ok := reader.MethodByName(name); !ok && !gateOwn[name] {
			t.Errorf("the gate has a method %s, which is not loom.Reader's nor one of its own helpers", name)
		}
	}
	// Nor any write of loom.Store, nor any service of an engine: the
	// required ones (loom.Engine's methods) or the optional ones
	// (Optional).
	for i := range engine.NumMethod() {
		name := engine.Method(i).Name
		if _, ok := reader.MethodByName(name); ok {
			continue
		}
		if _, ok := typ.MethodByName(name); !ok {
			continue
		}
		if _, write := store.MethodByName(name); write {
			t.Errorf("the gate has loom.Store's write %s", name)
		} else {
			t.Errorf("the gate hands on the engine's service %s", name)
		}
	}
	if _, ok := typ.MethodByName("Below"); ok {
		t.Error("the gate hands on the store below (Below)")
	}
	reads := reflect.ValueOf(g.Reads())
	for i := range reads.NumField() {
		f, v := reads.Type().Field(i), reads.Field(i)
		if v.IsNil() {
			t.Errorf("Reads().%s is nil over an engine that has it", f.Name)
			continue
		}
		got := v.Elem().Type()
		if got.NumMethod() != f.Type.NumMethod() {
			t.Errorf("Reads().%s is a %s with %d methods, want only the %d of %s", f.Name, got, got.NumMethod(), f.Type.NumMethod(), f.Type)
		}
		for j := range got.NumMethod() {
			if _, ok := f.Type.MethodByName(got.Method(j).Name); !ok {
				t.Errorf("Reads().%s has a method %s that %s has not", f.Name, got.Method(j).Name, f.Type)
			}
		}
	}
}
