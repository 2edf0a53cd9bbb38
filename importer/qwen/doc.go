// Package qwen reads the sessions of Qwen Code (@qwen-code/qwen-code,
// the `qwen` command) into loom.
//
// Qwen Code keeps one JSONL file per session under
// $QWEN_HOME/projects (~/.qwen/projects), in a directory per project
// (its path with every character but letters and digits as "-"):
// chats/<session id>.jsonl. Every line is a record (uuid, parentUuid,
// sessionId, timestamp, type, cwd, version, gitBranch); a user,
// assistant or tool_result record holds a message as the Gemini API's
// Content (role and parts), which Qwen Code records whatever API it
// speaks. Qwen Code resumes a session at its last record, walking
// parentUuid back, so the session loom imports is that path; records
// off it (a turn rewound away) are counted as skipped.
//
// What becomes what:
//
//   - user → user messages (text, inline data and files as file parts;
//     the <system-reminder> parts Qwen Code adds are left out, counted);
//     a user record with a subtype (a background agent's notification)
//     is a system message.
//   - assistant → assistant messages: text, thought parts as reasoning,
//     functionCall as tool parts, the model, and the usage of
//     usageMetadata (the prompt less its cached tokens as input, the
//     cached tokens as cache reads, candidates as output — an OpenAI
//     reply's completion tokens, reasoning included — and thoughts as
//     reasoning). Each is one model call, but for a record without
//     usage right after another assistant record: the rest of the same
//     response (a sub-agent's text and its calls are two records).
//   - tool_result → completes its call's tool part with the
//     functionResponse's output, or its error.
//   - system chat_compression → a summary message of the summary the
//     model goes on with (one compaction); custom_title titles the
//     session; every other system record (ui_telemetry, snapshots,
//     slash commands) is counted as skipped by subtype.
//   - subagents/<session id>/agent-<agent id>.jsonl (records of the same
//     shape) → a sub-agent session, titled by its .meta.json's
//     description and linked by an agent part after the call its
//     toolUseId names.
package qwen
