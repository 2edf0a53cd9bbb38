package span

import (
	"reflect"
	"testing"
)

func TestSpans(t *testing.T) {
	parent := []Span{{1, 10, "g"}, {11, OpenSeq, "p"}}
	for _, tc := range []struct {
		name string
		got  []Span
		want []Span
	}{
		{"fork inside the grandparent's", Inherit(parent, 5, "f"), []Span{{1, 5, "g"}, {6, OpenSeq, "f"}}},
		{"fork after it", Inherit(parent, 20, "f"), []Span{{1, 10, "g"}, {11, 20, "p"}, {21, OpenSeq, "f"}}},
		{"fork of nothing", Inherit(parent, 0, "f"), ownSpans("f")},
		{"rewound in its own store", Inherit(ownSpans("s"), 4, "s2"), []Span{{1, 4, "s"}, {5, OpenSeq, "s2"}}},
		{"copy on write inside", CopyOnWrite([]Span{{1, 20, "p"}, {21, OpenSeq, "f"}}, 7),
			[]Span{{1, 6, "p"}, {7, 7, "f"}, {8, 20, "p"}, {21, OpenSeq, "f"}}},
		{"copy on write of the last inherited", CopyOnWrite([]Span{{1, 20, "p"}, {21, OpenSeq, "f"}}, 20),
			[]Span{{1, 19, "p"}, {20, OpenSeq, "f"}}},
		{"copy on write of the first", CopyOnWrite([]Span{{1, 20, "p"}, {21, OpenSeq, "f"}}, 1),
			[]Span{{1, 1, "f"}, {2, 20, "p"}, {21, OpenSeq, "f"}}},
		{"copy on write next to a copy", CopyOnWrite([]Span{{1, 6, "p"}, {7, 7, "f"}, {8, 20, "p"}, {21, OpenSeq, "f"}}, 8),
			[]Span{{1, 6, "p"}, {7, 8, "f"}, {9, 20, "p"}, {21, OpenSeq, "f"}}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if OwnStore(parent) != "p" {
		t.Errorf("own store = %q", OwnStore(parent))
	}
	if sp, ok := Of(parent, 10); !ok || sp.RowsOf != "g" {
		t.Errorf("span of 10 = %v, %v", sp, ok)
	}
	if _, ok := Of(nil, 1); ok {
		t.Error("a message of no span")
	}
}

// ownSpans are the spans of a session that stores all its messages under
// store, as a new session does under its own id.
func ownSpans(store string) []Span { return []Span{{First: 1, Last: OpenSeq, RowsOf: store}} }
