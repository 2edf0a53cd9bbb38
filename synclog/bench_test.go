package synclog

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/loomhq/loom/envelope"
)

// BenchmarkEncodeDecode encodes and decodes append records of one
// assistant message (a reasoning, a tool and a text part) and of 100
// messages of a conversation, and reports their size: as JSON, encoded
// (compressed), and on the wire (sealed, with the header beside it).
func BenchmarkEncodeDecode(b *testing.B) {
	for _, n := range []int{1, 100} {
		first := int64(2) // an assistant message: three parts
		if n > 1 {
			first = 1
		}
		p := &MessagesAppended{SessionID: sessionID, FirstSeq: first, Messages: messages(7, first, n), At: t0}
		if first > 1 {
			p.PrevID = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c00"
		}
		b.Run(fmt.Sprintf("%dmessages", n), func(b *testing.B) {
			js, err := json.Marshal(p)
			if err != nil {
				b.Fatal(err)
			}
			enc := mustEncode(b, p)
			b.ReportAllocs()
			b.SetBytes(int64(len(js)))
			for b.Loop() {
				e, err := Encode(p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Decode(e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(js)), "json-bytes")
			b.ReportMetric(float64(len(enc)), "encoded-bytes")
			b.ReportMetric(float64(len(enc)+envelope.Overhead+HeaderSize), "wire-bytes")
		})
	}
}
