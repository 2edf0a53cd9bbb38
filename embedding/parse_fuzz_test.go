package embedding

import "testing"

// FuzzParse checks that any answer either parses into n unit vectors of
// one length or is an error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":0,"embedding":[0.5,0.5]},{"index":1,"embedding":[1,0]}]}`), 2)
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1]}]}`), 1)
	f.Add([]byte(`{"data":null}`), 0)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		vecs, err := parse(data, n)
		if err != nil {
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d texts", len(vecs), n)
		}
		for _, v := range vecs {
			if len(v) != len(vecs[0]) {
				t.Fatal("vectors of different lengths")
			}
		}
	})
}
