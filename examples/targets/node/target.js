#!/usr/bin/env node
// A small ctxmodel process target in JavaScript (contract §7): describe, effective, normalize and
// request over JSON lines on stdin/stdout. No npm dependencies.
//
// It is a second, independent implementation of contract §2 (visibility) and §3 (pairing
// normalization) with the reference's policies, written the way an agent's TypeScript would be.
// It runs on ctxmodel's JavaScript target kit (`ctxmodel target-kit --path`), which does the
// JSON-lines loop, `describe`, error replies and the input-mutation check; numbers are kept as their
// source text (`numbers: "lossless"`), so 12345678901234567890 comes back as it was sent.
"use strict";

const path = require("path");
const kit = require(
  process.env.CTXMODEL_TARGET_KIT || path.join(__dirname, "../../../ctxmodel/targetkit/js/ctxmodel-target.cjs"),
);

const SYNTHETIC_TEXT = "Tool execution was interrupted before completion.";

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
  const body = c === undefined || c === null ? "" : typeof c === "string" ? c : kit.stringifyLossless(c);
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

// Contract §3 "judged on what is sent": the rules apply to the visible messages, adjacency taken
// between visible messages; hidden messages stay as they are, each before the visible message it
// preceded. Each visible message is tagged with its input index by a symbol key (which spreads
// keep and JSON.stringify drops), so the hidden ones can be put back around what normalize returns.
const ORIGIN = Symbol("origin");

function normalizeStored(messages, policies) {
  const shown = new Set(effective(messages));
  if (shown.size === messages.length) return normalize(messages, policies);
  const visible = [];
  const hiddenBefore = new Map(); // visible input index -> hidden messages just before it
  let run = [];
  messages.forEach((m, i) => {
    if (!shown.has(m)) { run.push(m); return; }
    hiddenBefore.set(i, run);
    run = [];
    visible.push({ ...m, [ORIGIN]: i });
  });
  const out = [];
  const pending = [...hiddenBefore.keys()];
  const flushUpTo = (limit) => {
    while (pending.length && pending[0] <= limit) out.push(...hiddenBefore.get(pending.shift()));
  };
  for (const m of normalize(visible, policies)) {
    if (typeof m[ORIGIN] === "number") flushUpTo(m[ORIGIN]);
    out.push(m);
  }
  flushUpTo(Infinity);
  out.push(...run);
  return out;
}

// ---- the protocol (the kit) ---------------------------------------------------------------------

const POLICIES = { orphans: "drop", trailing: "leave", resultOrder: "tool_use", recoverSuccess: "fits" };

kit.serve({
  name: "node-example",
  version: "1.0.0",
  tokenizer: "zoo",
  policies: POLICIES,
  numbers: "lossless",
  ops: {
    effective: (p) => ({ messages: effective(kit.messagesOf(p)) }),
    normalize: (p, ctx) => ({ messages: normalizeStored(kit.messagesOf(p), ctx.policies) }),
    request: (p, ctx) => ({ messages: normalize(effective(kit.messagesOf(p)), ctx.policies) }),
  },
});
