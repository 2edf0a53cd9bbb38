-- Text stored once. A message whose one part is text or reasoning says
-- nothing but that text, which bodies.content (the text search indexes)
-- holds: its parts leave it out, and loom puts it back as it reads them
-- (loom.EncodeBody, loom.JoinText). Other messages keep their parts
-- whole. This leaves out the text of such bodies stored before.
UPDATE bodies SET parts = json_remove(parts, '$[0].text')
WHERE json_array_length(parts) = 1
  AND parts ->> '$[0].type' IN ('text', 'reasoning')
  AND content <> ''
  AND parts ->> '$[0].text' = content;
