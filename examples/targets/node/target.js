#!/usr/bin/env node
// A small ctxmodel process target in JavaScript (contract §7): describe, effective, normalize and
// request over JSON lines on stdin/stdout. No npm dependencies.
//
// It is a second, independent implementation of contract §2 (visibility) and §3 (pairing
// normalization) with the reference's policies, written the way an agent's TypeScript would be.
// Numbers are kept as their source text (a tiny lossless JSON codec below): JSON.parse would turn
// 12345678901234567890 into 12345678901234567000 and the gate would rightly call that corruption.
"use strict";

const readline = require("readline");

const SYNTHETIC_TEXT = "Tool execution was interrupted before completion.";

// ---- lossless JSON ----------------------------------------------------------------------------

class Num {
  constructor(text) { this.text = text; }
}

function parseJson(text) {
  let i = 0;
  const ws = () => { while (i < text.length && " \t\r\n".includes(text[i])) i++; };
  const fail = (what) => { throw new SyntaxError(`${what} at offset ${i}`); };
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++; const obj = {}; ws();
      if (text[i] === "}") { i++; return obj; }
      for (;;) {
        ws(); if (text[i] !== '"') fail("expected a key");
        const key = string(); ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        Object.defineProperty(obj, key, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return obj; }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++; const arr = []; ws();
      if (text[i] === "]") { i++; return arr; }
      for (;;) {
        arr.push(value()); ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "]") { i++; return arr; }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) { i += 4; return true; }
    if (text.startsWith("false", i)) { i += 5; return false; }
    if (text.startsWith("null", i)) { i += 4; return null; }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail("unexpected character");
    i += m[0].length;
    return new Num(m[0]);
  }
  function string() {
    const start = i; i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i));
  }
  const out = value(); ws();
  if (i !== text.length) fail("trailing characters");
  return out;
}

function dumpJson(v) {
  if (v instanceof Num) return v.text;
  if (Array.isArray(v)) return "[" + v.map(dumpJson).join(",") + "]";
  if (v !== null && typeof v === "object") {
    return "{" + Object.keys(v).map((k) => JSON.stringify(k) + ":" + dumpJson(v[k])).join(",") + "}";
  }
  return JSON.stringify(v);
}

// ---- contract §2: visibility --------------------------------------------------------------------

function effective(messages) {
  const summaries = new Set();
  const markers = new Set();
  for (const m of messages) {
    if (m.isSummary === true && typeof m.condenseId === "string") summaries.add(m.condenseId);
    if (m.isTruncationMarker === true && typeof m.truncationId === "string") markers.add(m.truncationId);
  }
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].isSummary === true) { start = i; break; }
  return messages.filter((m, i) => {
    if (start >= 0 && i < start) return false;
    if (i === start) return true;
    const hiddenByCondense = typeof m.condenseParent === "string" && summaries.has(m.condenseParent);
    const hiddenByTruncation = typeof m.truncationParent === "string" && markers.has(m.truncationParent);
    return !(hiddenByCondense || hiddenByTruncation);
  });
}

// ---- contract §3: pairing normalization ---------------------------------------------------------

const synthetic = (id) => ({ type: "tool_result", tool_use_id: id, content: SYNTHETIC_TEXT, is_error: true });
const isBlock = (b, type) => b !== null && typeof b === "object" && b.type === type;
const usesOf = (m) =>
  m && m.role === "assistant" && Array.isArray(m.content)
    ? m.content.filter((b) => isBlock(b, "tool_use")).map((b) => b.id)
    : [];

function orphanText(result) {
  const c = result.content;
  const body = c === undefined || c === null ? "" : typeof c === "string" ? c : dumpJson(c);
  return { type: "text", text: "Tool result:\n" + body };
}

// Rule 5 first: each tool_use id once in the request. Returns [inputIndex, message] pairs.
function dedupeToolUses(messages) {
  const seen = new Set();
  let kill = new Set();
  const out = [];
  messages.forEach((m, index) => {
    const pending = kill;
    kill = new Set();
    if (!Array.isArray(m.content)) { out.push([index, m]); return; }
    let kept;
    if (m.role === "assistant") {
      const here = new Set();
      kept = m.content.filter((b) => {
        if (!isBlock(b, "tool_use")) return true;
        if (seen.has(b.id)) { kill.add(b.id); return false; }
        if (here.has(b.id)) return false;
        here.add(b.id);
        return true;
      });
      for (const id of here) seen.add(id);
    } else if (pending.size) {
      kept = m.content.filter((b) => !(isBlock(b, "tool_result") && pending.has(b.tool_use_id)));
    } else {
      out.push([index, m]);
      return;
    }
    if (kept.length === m.content.length) out.push([index, m]);
    else if (kept.length > 0) out.push([index, { ...m, content: kept }]);
  });
  return out;
}

function pair(message, uses, valid, orphans) {
  const content = message.content;
  if (typeof content === "string") {
    if (!uses.length) return message;
    const tail = content ? [{ type: "text", text: content }] : [];
    return { ...message, content: uses.map(synthetic).concat(tail) };
  }
  const wanted = new Set(valid);
  const kept = new Map();
  const others = [];
  for (const block of content) {
    if (isBlock(block, "tool_result")) {
      const id = block.tool_use_id;
      if (wanted.has(id)) {
        if (!kept.has(id)) kept.set(id, block);
      } else if (orphans === "to_text") {
        others.push(orphanText(block));
      }
      continue;
    }
    others.push(block);
  }
  const blocks = uses.map((u) => (kept.has(u) ? kept.get(u) : synthetic(u))).concat(others);
  if (blocks.length === content.length && blocks.every((b, i) => b === content[i])) return message;
  if (!blocks.length) return null;
  return { ...message, content: blocks };
}

function normalize(messages, policies) {
  const orphans = policies.orphans === "to_text" ? "to_text" : "drop";
  const staged = dedupeToolUses(messages);
  const inputUses = new Map(staged.filter(([, m]) => m.role === "assistant").map(([i, m]) => [i, usesOf(m)]));
  const out = [];
  for (const [index, message] of staged) {
    const uses = usesOf(out[out.length - 1]);
    if (message.role === "user") {
      const valid = (inputUses.get(index - 1) || []).filter((u) => uses.includes(u));
      const paired = pair(message, uses, valid, orphans);
      if (paired !== null) out.push(paired);
      continue;
    }
    if (uses.length) out.push({ role: "user", content: uses.map(synthetic) });
    out.push(message);
  }
  if (policies.trailing === "close") {
    const uses = usesOf(out[out.length - 1]);
    if (uses.length) out.push({ role: "user", content: uses.map(synthetic) });
  }
  return out;
}

// ---- the protocol -------------------------------------------------------------------------------

const POLICIES = { orphans: "drop", trailing: "leave", resultOrder: "tool_use", recoverSuccess: "fits" };

const OPS = {
  describe: () => ({
    protocol: 1,
    name: "node-example",
    version: "1.0.0",
    ops: ["describe", "effective", "normalize", "request"],
    tokenizer: "zoo",
    policies: POLICIES,
  }),
  effective: (p) => ({ messages: effective(messagesOf(p)) }),
  normalize: (p) => ({ messages: normalize(messagesOf(p), { ...POLICIES, ...(p.policies || {}) }) }),
  request: (p) => ({ messages: normalize(effective(messagesOf(p)), { ...POLICIES, ...(p.policies || {}) }) }),
};

function messagesOf(params) {
  if (!Array.isArray(params.messages)) throw new Error("params.messages: expected an array of messages");
  return params.messages;
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let id = null;
  let reply;
  try {
    const request = parseJson(line);
    id = request.id instanceof Num ? request.id : null;
    const op = OPS[request.op];
    if (!op) throw new Error(`unknown op ${JSON.stringify(request.op)}`);
    reply = `{"id":${dumpJson(id)},"result":${dumpJson(op(request.params || {}))}}`;
  } catch (err) {
    reply = `{"id":${dumpJson(id)},"error":${JSON.stringify({ message: String(err && err.message) })}}`;
  }
  process.stdout.write(reply + "\n");
});
