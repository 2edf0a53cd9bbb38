CREATE TABLE projects (id INTEGER PRIMARY KEY, directory TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE chats (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  is_deleted BOOLEAN NOT NULL DEFAULT 0, message_count INTEGER NOT NULL DEFAULT 0, current_directory TEXT, worktree_path TEXT,
  branch_name TEXT, project_id INTEGER);
CREATE TABLE messages (id INTEGER PRIMARY KEY, parent_chat_id INTEGER NOT NULL, parent_message_id INTEGER, role TEXT NOT NULL,
  model TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, input_tokens BIGINT, output_tokens BIGINT, reasoning_tokens BIGINT,
  cache_read_tokens BIGINT, cache_write_tokens BIGINT, status TEXT NOT NULL, finish_reason TEXT, error TEXT, enabled INTEGER NOT NULL DEFAULT 1);
CREATE TABLE message_parts (id INTEGER PRIMARY KEY, parent_chat_message_id INTEGER NOT NULL, part_index INTEGER NOT NULL, part_type TEXT NOT NULL);
CREATE TABLE message_part_text (message_part_id INTEGER PRIMARY KEY, is_thinking BOOLEAN NOT NULL DEFAULT FALSE);
CREATE TABLE message_content_nodes (id INTEGER PRIMARY KEY, parent_text_part_id INTEGER NOT NULL, node_index INTEGER NOT NULL, node_type TEXT NOT NULL);
CREATE TABLE message_node_text (node_id INTEGER PRIMARY KEY, content TEXT NOT NULL);
CREATE TABLE message_part_tool_call (message_part_id INTEGER PRIMARY KEY, provider_tool_use_id TEXT NOT NULL, tool_name TEXT NOT NULL,
  tool_input TEXT NOT NULL, tool_result TEXT, tool_error TEXT, tool_state TEXT NOT NULL DEFAULT 'pending', sub_agent_chat_id INTEGER);

INSERT INTO projects VALUES (1, '/home/u/atlas', 'atlas');
-- Chat 7: a prompt, a reply that thinks, reads a file and runs a sub-agent, the answer; a regenerated answer left off.
INSERT INTO chats VALUES (7, 'Speed up the tile cache', '2026-10-06T10:00:00Z', '2026-10-06T10:01:00Z', 0, 4, NULL, NULL, 'cache', 1);
INSERT INTO messages VALUES (70, 7, NULL, 'user', NULL, '2026-10-06T10:00:00Z', '2026-10-06T10:00:00Z', NULL, NULL, NULL, NULL, NULL, 'completed', NULL, NULL, 1);
INSERT INTO messages VALUES (71, 7, 70, 'assistant', 'claude-sonnet-4-5', '2026-10-06T10:00:05Z', '2026-10-06T10:00:20Z', 1200, 80, 20, 400, 100, 'completed', 'tool_use', NULL, 1);
INSERT INTO messages VALUES (72, 7, 70, 'assistant', 'claude-sonnet-4-5', '2026-10-06T10:00:30Z', '2026-10-06T10:00:40Z', 900, 30, 0, 0, 0, 'completed', 'end_turn', NULL, 0);
INSERT INTO messages VALUES (73, 7, 71, 'user', NULL, '2026-10-06T10:00:50Z', '2026-10-06T10:00:50Z', NULL, NULL, NULL, NULL, NULL, 'completed', NULL, NULL, 1);
INSERT INTO message_parts VALUES (700, 70, 0, 'text');
INSERT INTO message_part_text VALUES (700, 0);
INSERT INTO message_content_nodes VALUES (7000, 700, 0, 'text');
INSERT INTO message_node_text VALUES (7000, 'Why is the tile cache ');
INSERT INTO message_content_nodes VALUES (7001, 700, 1, 'text');
INSERT INTO message_node_text VALUES (7001, 'slow?');
INSERT INTO message_parts VALUES (710, 71, 0, 'text');
INSERT INTO message_part_text VALUES (710, 1);
INSERT INTO message_content_nodes VALUES (7100, 710, 0, 'text');
INSERT INTO message_node_text VALUES (7100, 'Look at the eviction first.');
INSERT INTO message_parts VALUES (711, 71, 1, 'tool_call');
INSERT INTO message_part_tool_call VALUES (711, 'toolu_a1', 'read_file', '{"path":"cache/lru.go"}', 'func (c *LRU) Get(k Key) { c.mu.Lock() }', NULL, 'completed', NULL);
INSERT INTO message_parts VALUES (712, 71, 2, 'tool_call');
INSERT INTO message_part_tool_call VALUES (712, 'toolu_a2', 'task', '{"prompt":"Find the cache benchmarks"}', 'BenchmarkGet in cache/lru_test.go', NULL, 'completed', 8);
INSERT INTO message_parts VALUES (713, 71, 3, 'text');
INSERT INTO message_part_text VALUES (713, 0);
INSERT INTO message_content_nodes VALUES (7130, 713, 0, 'text');
INSERT INTO message_node_text VALUES (7130, 'Get takes the write lock: use a read lock.');
INSERT INTO message_parts VALUES (720, 72, 0, 'text');
INSERT INTO message_part_text VALUES (720, 0);
INSERT INTO message_content_nodes VALUES (7200, 720, 0, 'text');
INSERT INTO message_node_text VALUES (7200, 'An answer the user regenerated.');
INSERT INTO message_parts VALUES (730, 73, 0, 'text');
INSERT INTO message_part_text VALUES (730, 0);
INSERT INTO message_content_nodes VALUES (7300, 730, 0, 'text');
INSERT INTO message_node_text VALUES (7300, 'Do it.');
-- Chat 8: the sub-agent's.
INSERT INTO chats VALUES (8, 'Find the cache benchmarks', '2026-10-06T10:00:10Z', '2026-10-06T10:00:15Z', 0, 2, '/home/u/atlas', NULL, NULL, 1);
INSERT INTO messages VALUES (80, 8, NULL, 'user', NULL, '2026-10-06T10:00:10Z', '2026-10-06T10:00:10Z', NULL, NULL, NULL, NULL, NULL, 'completed', NULL, NULL, 1);
INSERT INTO messages VALUES (81, 8, 80, 'assistant', 'claude-haiku-4-5', '2026-10-06T10:00:15Z', '2026-10-06T10:00:15Z', 300, 12, 0, 0, 0, 'completed', 'end_turn', NULL, 1);
INSERT INTO message_parts VALUES (800, 80, 0, 'text');
INSERT INTO message_part_text VALUES (800, 0);
INSERT INTO message_content_nodes VALUES (8000, 800, 0, 'text');
INSERT INTO message_node_text VALUES (8000, 'Find the cache benchmarks');
INSERT INTO message_parts VALUES (810, 81, 0, 'text');
INSERT INTO message_part_text VALUES (810, 0);
INSERT INTO message_content_nodes VALUES (8100, 810, 0, 'text');
INSERT INTO message_node_text VALUES (8100, 'BenchmarkGet in cache/lru_test.go');
-- Chat 9: deleted.
INSERT INTO chats VALUES (9, 'Gone', '2026-10-06T11:00:00Z', '2026-10-06T11:00:00Z', 1, 0, NULL, NULL, NULL, NULL);
