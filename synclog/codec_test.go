package synclog

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
)

func mustEncode(t testing.TB, p Payload) []byte {
	t.Helper()
	b, err := Encode(p)
	if err != nil {
		t.Fatalf("Encode(%s): %v", p.Type(), err)
	}
	return b
}

// Every type of record decodes to what was encoded.
func TestEncodeDecode(t *testing.T) {
	seen := map[Type]bool{}
	for _, p := range samples() {
		seen[p.Type()] = true
		b := mustEncode(t, p)
		if b[0] != FormatVersion || Type(b[1]) != p.Type() {
			t.Fatalf("%s: prefix % x", p.Type(), b[:prefixSize])
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", p.Type(), err)
		}
		if !reflect.DeepEqual(got, p) {
			gj, _ := json.Marshal(got)
			pj, _ := json.Marshal(p)
			t.Fatalf("%s decoded differently:\n got %s\nwant %s", p.Type(), gj, pj)
		}
		if again := mustEncode(t, got); !bytes.Equal(again, b) {
			t.Fatalf("%s: encoding what was decoded gives other bytes", p.Type())
		}
	}
	for ty := TypeSessionCreated; ty <= TypeImported; ty++ {
		if !seen[ty] {
			t.Errorf("no sample of %s", ty)
		}
	}
}

// A record too small to gain from compression is stored as JSON; a large
// one is compressed.
func TestEncodeCompressesWhenSmaller(t *testing.T) {
	small := mustEncode(t, &Restored{SessionIDs: []string{sessionID}})
	if small[2] != codecJSON {
		t.Errorf("a restore of one session is written with codec %d", small[2])
	}
	big := &MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: messages(1, 1, 20), At: t0}
	b := mustEncode(t, big)
	j, _ := json.Marshal(big)
	if b[2] != codecZstd || len(b) >= len(j)/2 {
		t.Errorf("20 messages: codec %d, %d bytes of %d bytes of JSON", b[2], len(b), len(j))
	}
}

// A record written by a newer loom is one clear error that says to
// upgrade, never a panic or a silent skip.
func TestDecodeNewer(t *testing.T) {
	body := mustEncode(t, &Restored{SessionIDs: []string{sessionID}})
	for name, b := range map[string][]byte{
		"format version": append([]byte{FormatVersion + 1}, body[1:]...),
		"payload type":   append([]byte{FormatVersion, 200}, body[2:]...),
		"codec":          append([]byte{FormatVersion, byte(TypeRestored), 9}, body[3:]...),
	} {
		_, err := Decode(b)
		if !errors.Is(err, ErrNewer) || !strings.Contains(err.Error(), "upgrade loom") {
			t.Errorf("%s unknown: %v", name, err)
		}
	}
	_, err := Decode(append([]byte{FormatVersion, 200}, body[2:]...))
	if !strings.Contains(err.Error(), "type 200") {
		t.Errorf("an unknown type is not named: %v", err)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := mustEncode(t, &MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: messages(1, 1, 4), At: t0})
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	prefix := []byte{FormatVersion, byte(TypeRestored), codecJSON}
	for name, b := range map[string][]byte{
		"nothing":         nil,
		"two bytes":       {FormatVersion, byte(TypeRestored)},
		"version 0":       append([]byte{0}, good[1:]...),
		"truncated zstd":  good[:len(good)-5],
		"damaged zstd":    flipped,
		"not JSON":        append(bytes.Clone(prefix), "session"...),
		"trailing bytes":  append(bytes.Clone(prefix), `{"session_ids":["`+sessionID+`"]}x`...),
		"wrong JSON type": append(bytes.Clone(prefix), `{"session_ids":"`+sessionID+`"}`...),
	} {
		p, err := Decode(b)
		if !errors.Is(err, ErrCorrupt) || p != nil {
			t.Errorf("%s: Decode = %v, %v; want ErrCorrupt", name, p, err)
		}
	}
	if _, err := Decode(append(prefix, "null"...)); !errors.Is(err, ErrInvalid) {
		t.Errorf("JSON null: %v, want ErrInvalid", err)
	}
}

// A small record that decompresses to more than MaxPayload is refused
// without decompressing it all.
func TestDecodeBomb(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	bomb := enc.EncodeAll(bytes.Repeat([]byte(" "), MaxPayload+1), []byte{FormatVersion, byte(TypeRestored), codecZstd})
	if len(bomb) > 1<<16 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	if _, err := Decode(bomb); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Decode(bomb) = %v, want ErrCorrupt", err)
	}
}

// A record that decodes but breaks its type's rules is refused on both
// sides: a host never writes one, and never applies one.
func TestInvalidPayloads(t *testing.T) {
	msgs := messages(1, 1, 3)
	gap := messages(1, 1, 3)
	gap[1].Seq = 5
	noRole := messages(1, 1, 1)
	noRole[0].Role = "robot"
	noPartID := messages(1, 1, 2)
	noPartID[1].Parts[0].ID = ""
	otherSession := messages(1, 1, 1)
	otherSession[0].SessionID = forkID
	noTime := messages(1, 1, 1)
	noTime[0].CreatedAt = time.Time{}
	badKey := row(sessionID)
	badKey.Key = "no colon"
	orphan := row(forkID)
	orphan.Kind = loom.KindFork
	for _, tc := range []struct {
		p    Payload
		want string
	}{
		{&SessionCreated{}, "no session"},
		{&SessionCreated{Session: &loom.Session{ID: "x", Kind: loom.KindMain, CreatedAt: t0}}, `session id "x" is not a UUID`},
		{&SessionCreated{Session: badKey}, `key "no colon"`},
		{&SessionCreated{Session: orphan}, "a fork without a parent"},
		{&SessionChanged{SessionID: sessionID}, "changes nothing"},
		{&SessionChanged{SessionID: sessionID, Title: ptr("two\nlines")}, "title must be one line"},
		{&SessionChanged{SessionID: sessionID, Key: ptr("bad")}, "SURFACE:NAME"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 0, Messages: msgs, At: t0}, "first seq 0"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, PrevID: msgs[0].ID, Messages: msgs, At: t0}, "the first message follows"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 2, Messages: msgs, At: t0}, "follows no message"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, At: t0}, "no messages"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: msgs}, "at no time"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: gap, At: t0}, "message 2 has seq 5"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: []*loom.Message{nil}, At: t0}, "message 1 is empty"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: noRole, At: t0}, `unknown message role "robot"`},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: noPartID, At: t0}, "part 1 has id"},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: otherSession, At: t0}, "is session " + forkID},
		{&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: noTime, At: t0}, "no created_at"},
		{&PartUpdated{SessionID: sessionID, Seq: 1, MessageID: msgs[0].ID, Part: loom.Part{ID: "p", Type: "video"}}, `unknown part type "video"`},
		{&PartUpdated{SessionID: sessionID, Seq: 0, MessageID: msgs[0].ID, Part: msgs[0].Parts[0]}, "message seq 0"},
		{&UsageUpdated{SessionID: sessionID, Seq: 1}, `message 1 has id ""`},
		{&Forked{Session: row(forkID), LastSeq: 1, LastID: msgs[0].ID}, `kind "main"`},
		{&Rewound{SessionID: sessionID, Turn: 1, KeepSeq: 1, KeepID: msgs[0].ID, Fork: row(forkID), Store: storeID, At: t0}, "not a fork of it"},
		{&Trashed{SessionIDs: []string{sessionID}}, "trash at no time"},
		{&Trashed{SessionIDs: []string{sessionID}, At: t0, Seen: Vector{"laptop": 1}}, `host id "laptop"`},
		{&Restored{}, "no sessions named"},
		{&Purged{SessionIDs: []string{"../etc"}}, "is not a UUID"},
		{&Imported{}, "no sessions"},
		{&Imported{Sessions: []*loom.SessionData{{Session: row(sessionID)}, {Session: row(sessionID)}}}, "imported twice"},
		{&Imported{Sessions: []*loom.SessionData{{Session: row(sessionID), Messages: messages(1, 2, 1)}}}, "message 1 has seq 2"},
	} {
		_, err := Encode(tc.p)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Encode(%s): %v, want ErrInvalid saying %q", tc.p.Type(), err, tc.want)
			continue
		}
		body, jerr := json.Marshal(tc.p)
		if jerr != nil {
			t.Fatal(jerr)
		}
		b := append([]byte{FormatVersion, byte(tc.p.Type()), codecJSON}, body...)
		if _, err := Decode(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode of an invalid %s: %v, want ErrInvalid", tc.p.Type(), err)
		}
	}
	if _, err := Encode(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Encode(nil) = %v", err)
	}
}

func testHeader(key envelope.Key) Header {
	return Header{Host: hostA, Index: 42, HLC: NewHLC(t0, 3), KeyID: key.ID()}
}

func TestHeaderBinary(t *testing.T) {
	h := Header{Host: hostA, Index: 42, HLC: NewHLC(t0, 3), KeyID: keyID}
	b, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := "01" + "0196a3b2000040008000" + "00000000000a" + "000000000000002a" + "019de2fb19000003" /* 2026-05-01T10:00:00Z in ms, logical 3 */ + keyID
	if len(b) != HeaderSize || hex.EncodeToString(b) != want {
		t.Fatalf("binary form %x, want %s", b, want)
	}
	var back Header
	if err := back.UnmarshalBinary(b); err != nil || back != h {
		t.Fatalf("UnmarshalBinary = %+v, %v", back, err)
	}
	if h.Stamp() != (Stamp{HLC: h.HLC, Host: hostA}) {
		t.Errorf("Stamp = %v", h.Stamp())
	}
	if s := h.String(); !strings.Contains(s, "#42") || !strings.Contains(s, string(hostA)) {
		t.Errorf("String = %q", s)
	}
	for name, bad := range map[string]Header{
		"no host":      {Index: 1, KeyID: keyID},
		"index 0":      {Host: hostA, KeyID: keyID},
		"index -1":     {Host: hostA, Index: -1, KeyID: keyID},
		"short key id": {Host: hostA, Index: 1, KeyID: "98bd"},
		"upper key id": {Host: hostA, Index: 1, KeyID: strings.ToUpper(keyID)},
	} {
		if _, err := bad.MarshalBinary(); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: MarshalBinary = %v", name, err)
		}
	}
	newer := bytes.Clone(b)
	newer[0] = SignedHeaderVersion + 1
	zeroIndex := bytes.Clone(b)
	copy(zeroIndex[17:25], make([]byte, 8))
	// An index past the int64 every store and the wire number records
	// with is no record's.
	hugeIndex := bytes.Clone(b)
	hugeIndex[17] = 0x80
	for name, bad := range map[string][]byte{"short": b[:40], "long": append(bytes.Clone(b), 0), "newer": newer,
		"index 0": zeroIndex, "index past int64": hugeIndex} {
		if err := back.UnmarshalBinary(bad); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: UnmarshalBinary = %v", name, err)
		}
	}
}

// A record sealed and opened with the user's key comes back whole; with
// another key, or moved under another header, it does not open.
func TestSealOpen(t *testing.T) {
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	other, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	h := testHeader(key)
	p := samples()[4]
	sealed, err := Seal(key, h, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Open(key, h, sealed)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("Open = %v, %v", got, err)
	}
	if _, err := Open(other, h, sealed); !errors.Is(err, envelope.ErrWrongKey) {
		t.Errorf("Open with another key: %v", err)
	}
	moved := h
	moved.Index++
	if _, err := Open(key, moved, sealed); !errors.Is(err, envelope.ErrTampered) {
		t.Errorf("Open under another header: %v", err)
	}
	if _, err := Seal(other, h, p); err == nil || !strings.Contains(err.Error(), "header names key") {
		t.Errorf("Seal with a key the header does not name: %v", err)
	}
	if _, err := Seal(key, h, &Restored{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Seal of an invalid payload: %v", err)
	}
}

func TestTypeString(t *testing.T) {
	if got := TypeMessagesAppended.String(); got != "messages_appended" {
		t.Errorf("String = %q", got)
	}
	if got := Type(0).String(); got != "type 0" {
		t.Errorf("String = %q", got)
	}
}

// A signed record opens with the key whose signing key signed it; with
// its signature taken off, changed, or made by another key, it is
// refused (envelope.ErrUnsigned), and put under a version 1 header to
// pass as an unsigned record of a loom before signing, it does not open
// (envelope.ErrTampered). An unsigned record of that loom still opens.
func TestSignedRecords(t *testing.T) {
	key, _ := envelope.NewKey()
	other, _ := envelope.NewKey()
	h := testHeader(key)
	h.Signed = true
	p := samples()[4]
	signed, err := Seal(key, h, p)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := h.MarshalBinary()
	var back Header
	if err := back.UnmarshalBinary(hb); err != nil || hb[0] != SignedHeaderVersion || back != h {
		t.Fatalf("signed header %x reads back as %+v, %v", hb, back, err)
	}
	if got, err := Open(key, h, signed); err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("Open of a signed record = %v, %v", got, err)
	}
	sealed := signed[envelope.SignatureSize:]
	changed := bytes.Clone(signed)
	changed[3] ^= 1
	body, _ := Encode(p)
	foreign := envelope.Sign(other.SigningKey(), RecordDomain, hb, sealed)
	for name, b := range map[string][]byte{"no signature": sealed, "a signature changed": changed, "another key's signature": foreign, "empty": nil} {
		if _, err := Open(key, h, b); !errors.Is(err, envelope.ErrUnsigned) {
			t.Errorf("Open of a signed record with %s: %v", name, err)
		}
	}
	v1 := h
	v1.Signed = false
	if _, err := Open(key, v1, sealed); !errors.Is(err, envelope.ErrTampered) {
		t.Errorf("a signed record put under an unsigned header: %v", err)
	}
	old, err := SealEncoded(key, v1, body)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Open(key, v1, old); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("Open of a record of a loom before signing = %v, %v", got, err)
	}
	if _, err := Open(other, h, signed); !errors.Is(err, envelope.ErrWrongKey) {
		t.Errorf("Open of a signed record with another key: %v", err)
	}
}
