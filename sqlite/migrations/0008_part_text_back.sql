-- Text given back. Migration 7 and the appends after it left the text
-- out of every body whose one part is text or reasoning, also when that
-- part said more (metadata: a compaction's, a thinking block's
-- signature). Reads give the text back only to parts that are an id and
-- a type (loom.TextOnlyEnds), so those bodies read with empty text:
-- their part gets its text again from bodies.content, which holds it
-- whole.
UPDATE bodies SET parts = json_set(parts, '$[0].text', content)
WHERE json_array_length(parts) = 1
  AND parts ->> '$[0].type' IN ('text', 'reasoning')
  AND parts ->> '$[0].text' IS NULL
  AND content <> ''
  AND substr(parts, -17) <> '","type":"text"}]'
  AND substr(parts, -22) <> '","type":"reasoning"}]';
