// Command hello prints a version line: the floor of loom version.
package main

import (
	"fmt"
	"runtime"
)

func main() {
	fmt.Printf("hello dev (%s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
