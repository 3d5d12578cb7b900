#!/usr/bin/env node
// A JavaScript recover target whose degradation cuts text one of two ways (domain §5.6):
//
//   node tests/targets/node_degrade_cut.js units    text.slice(0, n): n UTF-16 code units, which
//                                                  splits an emoji's surrogate pair when n falls
//                                                  between its halves (the bug: a lone surrogate)
//   node tests/targets/node_degrade_cut.js points   Array.from(text).slice(0, n).join(""): n code
//                                                  points, never half of one (correct)
//
// What to hide, where to cut and how many characters to keep are not this file's to decide: it asks
// the reference (a python worker serving tests/targets/variant_reference.py over the same JSON-lines
// protocol) and then makes each cut itself, the reference's count taken as the count its own `cut`
// keeps. So the two modes differ in that one line, as a JavaScript port of a degradation would.
"use strict";

const childProcess = require("child_process");
const fs = require("fs");
const path = require("path");
const { serve } = require("../../ctxmodel/targetkit/js/ctxmodel-target.cjs");

const MODE = process.argv[2];
const CUTS = {
  units: (text, n) => text.slice(0, n),
  points: (text, n) => Array.from(text).slice(0, n).join(""),
};
if (!(MODE in CUTS)) {
  process.stderr.write(`usage: node_degrade_cut.js units|points (got ${JSON.stringify(MODE)})\n`);
  process.exit(2);
}
const cut = CUTS[MODE];
const NOTICE = /\n\[Tool result truncated: \d+ characters removed to fit the context budget\]$/;

// ---- the reference, over JSON lines --------------------------------------------------------------

function python() {
  if (process.env.CTXMODEL_PYTHON) return process.env.CTXMODEL_PYTHON;
  const venv = path.join(__dirname, "..", "..", ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : "python3";
}

const worker = childProcess.spawn(python(), ["-m", "ctxmodel.targets._pyworker", "tests.targets.variant_reference:Reference"], {
  cwd: path.join(__dirname, "..", ".."),
  stdio: ["pipe", "pipe", "inherit"],
});
worker.stdin.on("error", () => {});
let buffered = "";
let nextId = 1;
const waiting = new Map();
worker.stdout.setEncoding("utf8");
worker.stdout.on("data", (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (!line.trim()) continue;
    const reply = JSON.parse(line);
    const done = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (done) done(reply);
  }
});
worker.on("exit", (code) => {
  for (const done of waiting.values()) done({ error: { message: `the reference worker exited (${code})` } });
  waiting.clear();
});
process.stdin.on("end", () => worker.stdin.end());

function ask(op, params) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, (reply) => (reply.error ? reject(new Error(reply.error.message)) : resolve(reply.result)));
    // JSON.stringify writes a lone surrogate as its escape, which Python reads back as it was.
    worker.stdin.write(JSON.stringify({ id, op, params }) + "\n");
  });
}

// ---- the cut --------------------------------------------------------------------------------------

function recut(text, held) {
  const notice = NOTICE.exec(text);
  if (notice === null || held.has(text)) return text;
  const prefix = text.slice(0, notice.index);
  return cut(prefix, Array.from(prefix).length) + text.slice(notice.index);
}

function resultTexts(messages, visit) {
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block === null || typeof block !== "object" || block.type !== "tool_result") continue;
      if (typeof block.content === "string") visit(block, "content");
      else if (Array.isArray(block.content))
        for (const item of block.content) if (item && typeof item.text === "string") visit(item, "text");
    }
  }
}

async function recover(params) {
  const out = await ask("recover", params);
  if (out.error !== null) return out;
  const held = new Set();
  resultTexts(params.messages, (holder, key) => held.add(holder[key]));
  resultTexts(out.messages, (holder, key) => {
    holder[key] = recut(holder[key], held);
  });
  return out;
}

serve({
  name: `node-degrade-cut-${MODE}`,
  version: "1",
  tokenizer: "zoo",
  policies: { orphans: "drop", trailing: "leave", resultOrder: "tool_use", recoverSuccess: "fits" },
  ops: {
    recover: (params) => recover(params),
    count: (params) => ask("count", params),
  },
});
