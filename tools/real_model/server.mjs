// A small OpenAI-compatible chat server over node-llama-cpp's prebuilt CPU binaries, for the
// slow suite and `hopwise bench llm` against a real local model (no compile step).
//
//   node server.mjs --model MODEL.gguf --port 8765 [--threads 1] [--context 4096]
//
// Routes: GET /health, GET /v1/models, POST /v1/chat/completions (stream or not;
// response_format json_schema or json_object through the model's grammar). Tool calls are
// refused with HTTP 400, so a client falls back to JSON mode. One request is generated at a
// time (one context sequence); others wait their turn. Loopback only.
import http from "node:http";
import path from "node:path";
import { getLlama, LlamaChat } from "node-llama-cpp";

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const modelPath = option("model", process.env.HOPWISE_REAL_MODEL_GGUF);
const port = Number(option("port", "8765"));
const threads = Number(option("threads", "1"));
const contextSize = Number(option("context", "4096"));
if (!modelPath) {
  console.error("usage: node server.mjs --model MODEL.gguf --port PORT");
  process.exit(2);
}
const modelName = path.basename(modelPath).replace(/\.gguf$/, "");

const llama = await getLlama({
  gpu: false,
  build: "never",
  usePrebuiltBinaries: true,
  skipDownload: true,
  logLevel: "error",
});
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize, threads, sequences: 1 });
const chat = new LlamaChat({ contextSequence: context.getSequence() });
const grammars = new Map();
let queue = Promise.resolve();

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json" });
  res.end(text);
}

function fail(res, status, message) {
  send(res, status, { error: { message, type: "invalid_request_error", code: status } });
}

async function grammarFor(format) {
  if (!format || format.type === "text") return undefined;
  let key;
  let make;
  if (format.type === "json_object") {
    key = "json";
    make = () => llama.getGrammarFor("json");
  } else if (format.type === "json_schema" && format.json_schema?.schema) {
    key = JSON.stringify(format.json_schema.schema);
    make = () => llama.createGrammarForJsonSchema(format.json_schema.schema);
  } else {
    throw new Error(`unsupported response_format ${format.type}`);
  }
  if (!grammars.has(key)) grammars.set(key, await make());
  return grammars.get(key);
}

function history(messages) {
  const items = [];
  for (const m of messages) {
    const text = Array.isArray(m.content)
      ? m.content.map((p) => (typeof p === "string" ? p : p.text || "")).join("")
      : String(m.content ?? "");
    if (m.role === "system" || m.role === "developer") items.push({ type: "system", text });
    else if (m.role === "assistant") items.push({ type: "model", response: [text] });
    else items.push({ type: "user", text });
  }
  items.push({ type: "model", response: [] });
  return items;
}

function chunk(id, created, delta, finish) {
  return {
    id,
    object: "chat.completion.chunk",
    created,
    model: modelName,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

async function complete(body, req, res) {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return fail(res, 400, "messages is required");
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    return fail(res, 400, "tool calls are not supported by this server");
  }
  let grammar;
  try {
    grammar = await grammarFor(body.response_format);
  } catch (err) {
    return fail(res, 400, `response_format refused: ${err.message}`);
  }
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const id = `chatcmpl-${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  const stream = Boolean(body.stream);
  const items = history(body.messages);
  const promptTokens = model.tokenize(
    items.map((i) => (i.type === "model" ? i.response.join("") : i.text)).join("\n"),
  ).length;
  let completionTokens = 0;
  if (stream) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`data: ${JSON.stringify(chunk(id, created, { role: "assistant", content: "" }, null))}\n\n`);
  }
  let text = "";
  let finish = "stop";
  try {
    const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? 0) || undefined;
    const result = await chat.generateResponse(items, {
      grammar,
      maxTokens,
      temperature: Number(body.temperature ?? 0),
      seed: body.seed ?? 0,
      signal: abort.signal,
      stopOnAbortSignal: true,
      onToken: (tokens) => {
        completionTokens += tokens.length;
      },
      onTextChunk: (piece) => {
        text += piece;
        if (stream && !abort.signal.aborted) {
          res.write(`data: ${JSON.stringify(chunk(id, created, { content: piece }, null))}\n\n`);
        }
      },
    });
    if (result.metadata?.stopReason === "maxTokens") finish = "length";
  } catch (err) {
    if (abort.signal.aborted) return;
    if (stream) {
      res.end();
      return;
    }
    return fail(res, 500, `generation failed: ${err.message}`);
  }
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (stream) {
    if (abort.signal.aborted) return;
    res.write(`data: ${JSON.stringify(chunk(id, created, {}, finish))}\n\n`);
    if (body.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ ...chunk(id, created, {}, null), choices: [], usage })}\n\n`);
    }
    res.end("data: [DONE]\n\n");
    return;
  }
  send(res, 200, {
    id,
    object: "chat.completion",
    created,
    model: modelName,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: finish }],
    usage,
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://localhost");
  if (req.method === "GET" && url.pathname === "/health") return send(res, 200, { status: "ok" });
  if (req.method === "GET" && url.pathname === "/v1/models") {
    return send(res, 200, { object: "list", data: [{ id: modelName, object: "model", owned_by: "local" }] });
  }
  if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
    return fail(res, 404, "not found");
  }
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (piece) => {
    raw += piece;
  });
  req.on("end", () => {
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return fail(res, 400, "the body is not JSON");
    }
    // one generation at a time: the next waits for the one before, whatever its outcome
    queue = queue.then(() => complete(body, req, res)).catch(() => undefined);
  });
});

server.listen(port, "127.0.0.1", () => {
  console.log(`hopwise real-model server: ${modelName} on http://127.0.0.1:${port}/v1`);
});
