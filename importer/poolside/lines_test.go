package poolside

import "bytes"

func splitLines(data []byte) [][]byte { return bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) }

func joinLines(lines [][]byte) []byte { return append(bytes.Join(lines, []byte("\n")), '\n') }
