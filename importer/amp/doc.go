// Package amp reads the threads of Amp, Sourcegraph's coding agent, for
// loom's importer.
//
// # Where
//
// Amp (its CLI and its editor extensions) keeps each thread as one JSON
// file, T-<id>.json, in ~/.local/share/amp/threads
// ($XDG_DATA_HOME/amp/threads), and rewrites the whole file as the
// thread grows.
//
// # What is imported
//
// One session per thread with messages, under its id, with its title,
// its creation time and the first of its initial environment's trees
// (a file:// URI) as working directory. Its messages, named
// <thread>:<messageId>, in the form of Anthropic's Messages API: user
// text and images, assistant text, thinking as reasoning (signature
// kept), redacted thinking, and tool_use blocks as tool parts that the
// tool_result blocks of the next user message complete. Amp's results
// ({toolUseID, run: {status, result, error}}): the result's output,
// content or diff (else its JSON) is the output, the whole result object
// kept in metadata; status error (its message), cancelled or a result
// with success false is an error, and a run still in progress leaves the
// call running. Each reply's usage (input, output, cache writes and
// reads) and model are its own; for an OpenAI model (gpt-…), whose
// uncached prompt Amp counts as cache creation, that count is input.
// A message's time is its meta.sentAt, else its usage's timestamp,
// else the one before.
//
// # What is skipped
//
// Counted as skipped: info messages (notices in Amp's window), empty
// text and reasoning, results whose call is not in the thread, unknown
// roles and block types ("unknown:<type>"), empty threads. A file that
// is not JSON (or over 256 MiB) is an error of that file; a block that is
// not an object is a problem and the rest is read. Amp's sub-agents
// (its Task tool) keep their work inside the tool's result, which is
// imported as the call's output; there is no sub-agent thread to link.
//
// # Versions
//
// The layout was learned from public tools that read Amp's thread files
// (no file written by Amp was available, and Amp's CLI needs its cloud
// service to run): the tests read a hand-written thread in testdata/ of
// the form those tools describe (thread format version 42).
package amp
