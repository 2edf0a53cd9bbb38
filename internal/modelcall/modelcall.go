// Package modelcall is the half of a model provider that does not depend
// on the service's protocol: how often a call is retried, a streamed reply
// assembled into parts, tool calls and their results as loom keeps them,
// a failed call told in one line, the POST of a call with the retry
// rules of the services' official SDKs, and a reader of server-sent
// events. The openai and anthropic packages each speak their own protocol
// over these, so that both behave alike.
package modelcall

// Retries is how often a failed call is retried when the configuration
// says configured: def for zero, never for a negative number.
func Retries(configured, def int) int {
	switch {
	case configured == 0:
		return def
	case configured < 0:
		return 0
	}
	return configured
}
