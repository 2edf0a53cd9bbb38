// Package antigravity reads, for loom's importer, what Google's
// Antigravity IDE keeps of its agent's conversations in a form that can
// be read: the artifacts the agent writes.
//
// # Where
//
// Antigravity keeps its data in ~/.gemini/antigravity: each
// conversation itself in conversations/<conversation id>.pb, which is
// encrypted (and a protobuf without a published schema inside), and the
// artifacts the agent writes as it works in brain/<conversation id>/:
// markdown documents (task.md, implementation_plan.md, walkthrough.md,
// and others), each with <name>.metadata.json (its type, a summary, the
// time it was last updated) and earlier versions (<name>.resolved.<n>).
// PATH may be the data directory, its brain directory, one
// conversation's, or one of its files.
//
// # What is imported
//
//   - One session per conversation that has artifacts, under the
//     conversation's id, titled by the task's first heading.
//   - Each artifact is an assistant message (the agent wrote it), under
//     the artifact's name, holding its markdown; the part's metadata
//     names the artifact, its type and its summary; its time is the
//     metadata's updatedAt, else the file's. The task, the plan and the
//     walkthrough come first, in the order the agent writes them, then
//     the others by name. An artifact the agent rewrites is updated in
//     place on the next import.
//
// # What is not
//
// The conversation itself, encrypted: the prompts, the replies, the
// reasoning and the tool calls are not imported, and a session holds
// only the artifacts (counted as "encrypted-conversation" when the
// .pb file is there). Nor are the artifacts' earlier versions, the
// working directory (not recorded in a readable file), or usage. A
// metadata file that is not JSON, or an artifact that is not text (a
// NUL byte, or bytes that are not UTF-8: an artifact is Markdown, which
// any text is), is a file that could not be read, one line, and the
// rest of the conversation is read; an empty one says it is empty.
//
// A conversation the user exports from Antigravity as Markdown holds
// its prompts, replies and tool steps (without times, usage or the
// tools' results): package windsurf reads it (`loom session import
// --from windsurf FILE`).
//
// # Versions
//
// The layout was learnt from Antigravity's data directory as public
// tools that read it describe it. The fixture in testdata is written by
// hand to it: a conversation with the three known artifacts, another,
// a broken metadata file, an earlier version, and bytes standing for
// the encrypted conversation.
package antigravity
