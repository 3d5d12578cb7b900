"use strict";
// ctxmodel target kit for JavaScript and TypeScript (contract §7). No npm dependencies; Node >= 18.
//
//   const { serve } = require("./ctxmodel-target.cjs")      // or: import { serve } from "./ctxmodel-target.mjs"
//   serve({
//     name: "my-agent", version: "1.2.3", tokenizer: "o200k_base",
//     policies: { orphans: "drop", trailing: "leave", resultOrder: "any", recoverSuccess: "fits" },
//     ops: { effective: (params, ctx) => ({ messages: myEffective(params.messages) }) },
//   })
//
// What it does for a target, so that an adapter holds only the mapping onto the agent's functions:
// - the JSON-lines loop on stdin/stdout, one request at a time (ops may be async), `describe` built
//   from the spec, and every other write to stdout (console.log inside the agent's code) sent to
//   stderr so it can never break the protocol;
// - error replies whose message is the exception's "Name: message" plus the first lines of its stack;
// - a check that an op did not mutate its params: a deep copy is taken before the call and compared
//   after it; a difference is an error reply naming the first mutated JSON path
//   (`messages.3.content.1.text`). A process target's mutation is otherwise invisible to the
//   harness (it only ever sees a copy), yet an agent that mutates its history in place has a bug;
// - deterministic ids, clock and randomness per request (`crypto.randomUUID`, `Date.now`,
//   `new Date()`, `Math.random`), derived from the request's text, so the same input gives the same
//   output and two different inputs (a recovery applied to its own output) never share an id;
// - numbers: "native" (JSON.parse / JSON.stringify, what an agent does; the contract compares numbers
//   as IEEE doubles, so this edits nothing) or "lossless" (each number kept as its source text in a
//   `Num`, which still behaves as a number in arithmetic and in JSON.stringify).
//
// The spec: { name, version, tokenizer?, dialect?, policies?, ops, describe?, numbers?, checkMutation?,
//             deterministic?, clockStart? }. `ops` maps op names (normalize, effective, request,
//             recover, count, repair, trim) to functions (params, ctx) -> result object (or a promise of
//             one); ctx = { op, id, policies, uuid(), now() }. `dialect` ("anthropic" or "openai-chat")
//             is describe's own field, never a policy. `describe` adds fields to the describe reply.
//             The private op `roundtrip` (a library adapter's conversion to the library's messages and
//             back, for ctxmodel's own round-trip test) is answered but never listed in `describe`:
//             the harness knows no such op and refuses a target that declares one.
//
// A library adapter that serves one of several configurations picks it with
// `selectConfiguration(names)`: `--list` prints the names one per line and exits 0; a name not
// among them is a start error naming them.

const nodeCrypto = require("crypto");
const nodeModule = require("module");

const KIT_VERSION = "1.0.0";
const PROTOCOL = 1;
const OP_NAMES = ["normalize", "effective", "request", "recover", "count", "repair", "trim"];
// Answered, never declared: the harness's describe check refuses an op it does not know.
const PRIVATE_OPS = ["roundtrip"];
const DIALECTS = ["anthropic", "openai-chat"];
// The ops defined on messages of every dialect (contract §7); the others read Anthropic ones only.
const EVERY_DIALECT_OPS = ["trim", "count"];
const POLICY_CHOICES = {
  orphans: ["drop", "to_text", "any", "relabel"],
  trailing: ["leave", "close"],
  resultOrder: ["any", "tool_use"],
  recoverSuccess: ["fits", "converges"],
  inputs: ["any", "agent-stored", "untagged"],
  mergeUsers: ["no", "yes"],
  trimSystem: ["keep", "first", "any"],
  trimLastUser: ["keep", "any"],
  trimPartial: ["no", "yes"],
  trimBudget: ["tokens", "none"],
  trimToolCalls: ["keep", "pairs"],
  trimPlaceholder: ["none", "one"],
};
const STACK_LINES = 4;

// ---- numbers kept as their source text ----------------------------------------------------------

class Num {
  constructor(text) {
    this.text = text;
  }
  valueOf() {
    return Number(this.text);
  }
  toJSON() {
    return Number(this.text);
  }
  toString() {
    return this.text;
  }
  [Symbol.toPrimitive](hint) {
    return hint === "string" ? this.text : Number(this.text);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** JSON.parse, except that every number becomes a `Num` holding its exact source text. */
function parseLossless(text) {
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const fail = (what) => {
    throw new SyntaxError(`${what} at offset ${i}`);
  };
  function string() {
    const start = i;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) break;
      i += c === 92 ? 2 : 1;
    }
    if (i >= n) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i));
  }
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj = {};
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const key = string();
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        // defineProperty: a "__proto__" key is an own key, as with JSON.parse.
        Object.defineProperty(obj, key, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const arr = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m || m[0].length === 0) fail("unexpected character");
    i += m[0].length;
    return new Num(m[0]);
  }
  const out = value();
  ws();
  if (i !== n) fail("trailing characters");
  return out;
}

/** JSON.stringify's rules (undefined and functions skipped, toJSON honoured), with `Num` as its text. */
function stringifyLossless(v) {
  const out = [];
  const seen = new Set();
  function write(value, inArray) {
    if (value instanceof Num) {
      out.push(value.text);
      return true;
    }
    if (value !== null && typeof value === "object" && typeof value.toJSON === "function") value = value.toJSON();
    switch (typeof value) {
      case "string":
        out.push(JSON.stringify(value));
        return true;
      case "number":
        out.push(Number.isFinite(value) ? JSON.stringify(value) : "null");
        return true;
      case "boolean":
        out.push(value ? "true" : "false");
        return true;
      case "bigint":
        throw new TypeError("Do not know how to serialize a BigInt");
      case "undefined":
      case "function":
      case "symbol":
        if (inArray) out.push("null");
        return inArray;
      default:
        break;
    }
    if (value === null) {
      out.push("null");
      return true;
    }
    if (value instanceof Num) {
      out.push(value.text);
      return true;
    }
    if (seen.has(value)) throw new TypeError("Converting circular structure to JSON");
    seen.add(value);
    if (Array.isArray(value)) {
      out.push("[");
      for (let k = 0; k < value.length; k++) {
        if (k) out.push(",");
        write(value[k], true);
      }
      out.push("]");
    } else {
      out.push("{");
      let first = true;
      for (const key of Object.keys(value)) {
        const mark = out.length;
        if (!first) out.push(",");
        out.push(JSON.stringify(key), ":");
        if (write(value[key], false)) first = false;
        else out.length = mark;
      }
      out.push("}");
    }
    seen.delete(value);
    return true;
  }
  if (!write(v, false)) return undefined;
  return out.join("");
}

function codec(numbers) {
  if (numbers === "lossless") return { parse: parseLossless, stringify: stringifyLossless };
  if (numbers === undefined || numbers === "native") return { parse: JSON.parse, stringify: JSON.stringify };
  throw new Error(`ctxmodel target kit: numbers ${JSON.stringify(numbers)}: expected "native" or "lossless"`);
}

// ---- the mutation check --------------------------------------------------------------------------

/** A deep copy of a parsed JSON value (`Num`s are immutable values: shared). */
function cloneJson(v) {
  if (v === null || typeof v !== "object" || v instanceof Num) return v;
  if (Array.isArray(v)) return v.map(cloneJson);
  const out = {};
  for (const key of Object.keys(v)) {
    Object.defineProperty(out, key, { value: cloneJson(v[key]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function preview(v) {
  let text;
  try {
    text = v === undefined ? "nothing" : stringifyLossless(v);
  } catch {
    text = String(v);
  }
  if (text === undefined) text = String(v);
  return text.length > 60 ? text.slice(0, 57) + "..." : text;
}

function kindOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (v instanceof Num) return "number";
  return typeof v;
}

/**
 * The first JSON path where `after` differs from `before` (a copy taken before the call), as
 * `{path, was, now}`, or null. Paths read like the contract's: `messages.3.content.1.text`.
 */
function firstDifference(before, after, path = "") {
  const at = (key) => (path ? `${path}.${key}` : String(key));
  const kb = kindOf(before);
  const ka = kindOf(after);
  if (kb !== ka) return { path: path || "(params)", was: preview(before), now: preview(after) };
  if (kb === "number") {
    const same = before instanceof Num ? after instanceof Num && after.text === before.text : Object.is(before, after);
    return same ? null : { path: path || "(params)", was: preview(before), now: preview(after) };
  }
  if (kb !== "array" && kb !== "object") {
    return before === after ? null : { path: path || "(params)", was: preview(before), now: preview(after) };
  }
  if (kb === "array") {
    const common = Math.min(before.length, after.length);
    for (let k = 0; k < common; k++) {
      const d = firstDifference(before[k], after[k], at(k));
      if (d) return d;
    }
    if (before.length !== after.length) {
      const k = common;
      return { path: at(k), was: preview(before[k]), now: preview(after[k]) };
    }
    return null;
  }
  for (const key of Object.keys(before)) {
    if (!Object.prototype.hasOwnProperty.call(after, key)) return { path: at(key), was: preview(before[key]), now: "nothing" };
    const d = firstDifference(before[key], after[key], at(key));
    if (d) return d;
  }
  for (const key of Object.keys(after)) {
    if (!Object.prototype.hasOwnProperty.call(before, key)) return { path: at(key), was: "nothing", now: preview(after[key]) };
  }
  return null;
}

// ---- deterministic ids, clock and randomness -------------------------------------------------------

const RealDate = Date;
const realNow = Date.now;
const realRandom = Math.random;
const realRandomUUID = nodeCrypto.randomUUID;

// Per request: ids and random numbers follow from a hash of the op and its params (computed on first
// use, so a request that draws none costs nothing), the clock starts at `start` and ticks 1 ms per read.
const clock = { source: null, seed: "", uuids: 0, ticks: 0, start: 1767225600000, rng: 0 };

function resetClock(source) {
  clock.source = source;
  clock.seed = "";
  clock.uuids = 0;
  clock.ticks = 0;
}

function seeded() {
  if (clock.seed === "") {
    const source = typeof clock.source === "function" ? clock.source() : String(clock.source);
    clock.seed = nodeCrypto.createHash("sha256").update(source).digest("hex");
    clock.rng = parseInt(clock.seed.slice(0, 8), 16) >>> 0;
  }
  return clock.seed;
}

function nextUuid() {
  seeded();
  clock.uuids += 1;
  const h = nodeCrypto.createHash("sha256").update(`${clock.seed}:${clock.uuids}`).digest("hex");
  const variant = "89ab"[parseInt(h[16], 16) & 3];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function nextNow() {
  return clock.start + clock.ticks++;
}

function nextRandom() {
  seeded(); // mulberry32
  let t = (clock.rng = (clock.rng + 0x6d2b79f5) >>> 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

let determinismInstalled = false;

function installDeterminism(start) {
  if (typeof start === "number") clock.start = start;
  if (determinismInstalled) return;
  determinismInstalled = true;
  nodeCrypto.randomUUID = nextUuid;
  const web = globalThis.crypto;
  if (web && typeof web.randomUUID === "function") {
    try {
      Object.defineProperty(web, "randomUUID", { value: nextUuid, writable: true, configurable: true });
    } catch {
      /* a frozen webcrypto: agents use node's crypto module */
    }
  }
  class DeterministicDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(nextNow());
      else super(...args);
    }
    static now() {
      return nextNow();
    }
  }
  globalThis.Date = DeterministicDate;
  Math.random = nextRandom;
  try {
    nodeModule.syncBuiltinESMExports(); // `import { randomUUID } from "crypto"` sees it too
  } catch {
    /* older Node */
  }
}

function uninstallDeterminism() {
  if (!determinismInstalled) return;
  determinismInstalled = false;
  nodeCrypto.randomUUID = realRandomUUID;
  const web = globalThis.crypto;
  if (web && Object.prototype.hasOwnProperty.call(web, "randomUUID")) delete web.randomUUID;
  globalThis.Date = RealDate;
  RealDate.now = realNow;
  Math.random = realRandom;
  try {
    nodeModule.syncBuiltinESMExports();
  } catch {
    /* older Node */
  }
}

// ---- errors ----------------------------------------------------------------------------------------

/** "Name: message" and the first lines of the stack, for an error reply. */
function describeError(err) {
  if (err instanceof Error || (err && typeof err === "object" && typeof err.stack === "string")) {
    const name = err.name || "Error";
    const head = err.message ? `${name}: ${err.message}` : name;
    const frames = String(err.stack || "")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.startsWith("at ") && !line.includes(__filename) && !line.includes("node:internal"))
      .slice(0, STACK_LINES);
    return frames.length ? `${head}\n  ${frames.join("\n  ")}` : head;
  }
  let shown;
  try {
    shown = typeof err === "string" ? err : JSON.stringify(err);
  } catch {
    shown = String(err);
  }
  return `thrown (not an Error): ${shown}`;
}

class TargetInputError extends Error {
  constructor(message) {
    super(message);
    this.name = "TargetInputError";
  }
}

/** `params.messages`, checked to be an array (what every op but count without messages needs). */
function messagesOf(params) {
  if (!params || !Array.isArray(params.messages)) {
    throw new TargetInputError("params.messages: expected an array of messages");
  }
  return params.messages;
}

// ---- the server ------------------------------------------------------------------------------------

function checkSpec(spec) {
  if (!spec || typeof spec !== "object") throw new Error("ctxmodel target kit: serve(spec): expected an object");
  const ops = spec.ops || {};
  for (const [op, fn] of Object.entries(ops)) {
    if (!OP_NAMES.includes(op) && !PRIVATE_OPS.includes(op)) {
      throw new Error(
        `ctxmodel target kit: unknown op ${JSON.stringify(op)}; expected ${[...OP_NAMES, ...PRIVATE_OPS].join(", ")}`,
      );
    }
    if (typeof fn !== "function") throw new Error(`ctxmodel target kit: ops.${op}: expected a function`);
  }
  if (spec.dialect !== undefined) {
    if (!DIALECTS.includes(spec.dialect)) {
      throw new Error(`ctxmodel target kit: dialect ${JSON.stringify(spec.dialect)}: expected one of ${DIALECTS.join(", ")}`);
    }
    const anthropicOnly = Object.keys(ops).filter(
      (op) => OP_NAMES.includes(op) && !EVERY_DIALECT_OPS.includes(op),
    );
    if (spec.dialect !== DIALECTS[0] && anthropicOnly.length) {
      throw new Error(
        `ctxmodel target kit: dialect ${spec.dialect}: ops ${anthropicOnly.join(", ")} read Anthropic messages only; ` +
          `a ${spec.dialect} target offers some of ${EVERY_DIALECT_OPS.join(", ")}`,
      );
    }
  }
  if (spec.policies && Object.prototype.hasOwnProperty.call(spec.policies, "dialect")) {
    throw new Error('ctxmodel target kit: policies.dialect: declare it as the spec\'s own "dialect", not a policy');
  }
  for (const [key, value] of Object.entries(spec.policies || {})) {
    const choices = POLICY_CHOICES[key];
    if (choices && !choices.includes(value)) {
      throw new Error(`ctxmodel target kit: policy ${key}=${JSON.stringify(value)}: expected one of ${choices.join("|")}`);
    }
  }
  return ops;
}

/**
 * A server without I/O: `handle(request)` answers one parsed request, `handleLine(line)` one line
 * (the reply line, without its newline). `serve` wires it to stdin and stdout.
 */
function createServer(spec) {
  const ops = checkSpec(spec);
  const json = codec(spec.numbers);
  const checkMutation = spec.checkMutation !== false;
  const deterministic = spec.deterministic !== false;
  if (deterministic) installDeterminism(spec.clockStart);
  const declared = { ...(spec.policies || {}) };
  const offered = Object.keys(ops).filter((op) => !PRIVATE_OPS.includes(op));
  const answered = Object.keys(ops);

  function describe() {
    return {
      protocol: PROTOCOL,
      name: String(spec.name || "js-target"),
      version: String(spec.version || ""),
      ops: ["describe", ...offered],
      tokenizer: spec.tokenizer || "o200k_base",
      ...(spec.dialect !== undefined ? { dialect: spec.dialect } : {}),
      policies: declared,
      ...(spec.describe || {}),
    };
  }

  async function run(op, params, id) {
    if (op === "describe") return describe();
    const fn = answered.includes(op) ? ops[op] : undefined;
    if (!fn) {
      throw new TargetInputError(`unknown op ${JSON.stringify(op)}; this target offers ${["describe", ...offered].join(", ")}`);
    }
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      throw new TargetInputError("params: expected an object");
    }
    const policies = { ...declared, ...(params.policies && typeof params.policies === "object" ? params.policies : {}) };
    const ctx = { op, id, policies, uuid: nextUuid, now: nextNow };
    const before = checkMutation ? cloneJson(params) : null;
    const result = await fn(params, ctx);
    if (checkMutation) {
      const d = firstDifference(before, params);
      if (d) {
        const err = new Error(`${op} mutated its input at ${d.path} (was ${d.was}, now ${d.now})`);
        err.name = "InputMutated";
        err.stack = "";
        throw err;
      }
    }
    if (result === null || typeof result !== "object" || Array.isArray(result)) {
      throw new TargetInputError(`${op} returned ${kindOf(result)}, expected a result object`);
    }
    return result;
  }

  async function handle(request) {
    const id = request && typeof request === "object" && "id" in request ? request.id : null;
    if (deterministic) {
      resetClock(() => {
        const op = request && typeof request === "object" ? request.op : undefined;
        const params = request && typeof request === "object" ? request.params : undefined;
        return `${json.stringify(op)}\n${json.stringify(params === undefined ? {} : params)}`;
      });
    }
    try {
      if (request === null || typeof request !== "object" || Array.isArray(request)) {
        throw new TargetInputError("request: expected an object with id, op and params");
      }
      const result = await run(request.op, request.params === undefined ? {} : request.params, id);
      return { id, result };
    } catch (err) {
      return { id, error: { message: describeError(err) } };
    }
  }

  function encode(reply) {
    try {
      return json.stringify(reply);
    } catch (err) {
      return json.stringify({ id: reply.id, error: { message: `the reply is not JSON: ${describeError(err)}` } });
    }
  }

  async function handleLine(line) {
    let request;
    try {
      request = json.parse(line);
    } catch (err) {
      return JSON.stringify({ id: null, error: { message: `the request is not JSON: ${err && err.message}` } });
    }
    return encode(await handle(request));
  }

  return { describe, handle, handleLine, spec };
}

/**
 * The configuration an adapter was started with: its first argument, one of `names`. `--list`
 * prints the names one per line on stdout and exits 0 (before `serve` takes stdout over); no
 * argument or an unknown one is a start error (exit 2) naming the choices.
 */
function selectConfiguration(names, argv = process.argv.slice(2)) {
  const choices = [...names];
  if (argv[0] === "--list") {
    process.stdout.write(choices.map((name) => name + "\n").join(""));
    process.exit(0);
  }
  if (argv.length === 1 && choices.includes(argv[0])) return argv[0];
  const said = argv.length ? `configuration ${JSON.stringify(argv.join(" "))}: unknown` : "no configuration given";
  process.stderr.write(`ctxmodel target kit: ${said}; expected one of ${choices.join(", ")} (or --list)\n`);
  process.exit(2);
}

/** Serve `spec` over JSON lines on stdin/stdout until stdin ends. Returns the server. */
function serve(spec) {
  const server = createServer(spec);
  const out = process.stdout;
  const writeOut = out.write.bind(out);
  // Whatever else writes to stdout (console.log in the agent's code) goes to stderr.
  out.write = (...args) => process.stderr.write(...args);

  let pending = Buffer.alloc(0);
  let chain = Promise.resolve();
  const enqueue = (line) => {
    chain = chain.then(async () => {
      if (!line.trim()) return;
      const reply = await server.handleLine(line);
      writeOut(reply + "\n");
    });
  };
  process.stdin.on("data", (chunk) => {
    let data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let start = 0;
    for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
      enqueue(data.toString("utf8", start, nl));
      start = nl + 1;
    }
    pending = start < data.length ? Buffer.from(data.subarray(start)) : Buffer.alloc(0);
  });
  process.stdin.on("end", () => {
    if (pending.length) enqueue(pending.toString("utf8"));
    chain.then(() => writeOut("", () => process.exit(0)));
  });
  process.on("unhandledRejection", (reason) => {
    process.stderr.write(`ctxmodel target kit: unhandled rejection: ${describeError(reason)}\n`);
  });
  return server;
}

module.exports = {
  DIALECTS,
  KIT_VERSION,
  Num,
  OP_NAMES,
  POLICY_CHOICES,
  PRIVATE_OPS,
  TargetInputError,
  cloneJson,
  createServer,
  describeError,
  firstDifference,
  installDeterminism,
  messagesOf,
  parseLossless,
  selectConfiguration,
  serve,
  stringifyLossless,
  uninstallDeterminism,
};
