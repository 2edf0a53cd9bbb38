package envelope

import (
	"fmt"
	"testing"
)

func BenchmarkSeal(b *testing.B) {
	key, header := testKey(1), []byte("host a, index 7, message")
	for _, n := range []int{1 << 10, 64 << 10} {
		plaintext := make([]byte, n)
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				mustSeal(b, key, header, plaintext)
			}
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	key, header := testKey(1), []byte("host a, index 7, message")
	for _, n := range []int{1 << 10, 64 << 10} {
		sealed := mustSeal(b, key, header, make([]byte, n))
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Open(key, header, sealed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
