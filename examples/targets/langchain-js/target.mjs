// LangChain JS's trimMessages (@langchain/core) as a `trim` target in the openai-chat dialect
// (contract §10), one configuration named on the command line; `--list` prints the names:
//
//   python3 examples/targets/install.py langchain-js
//   ctxmodel check --target exec:"node examples/targets/langchain-js/target.mjs last-recipe" --profile ci
//
// The messages go in through the library's own coercion of OpenAI-style dicts
// (coerceMessageLikeToMessage: role, content, name, tool_calls, tool_call_id); a call whose
// arguments are not JSON, which that coercion refuses, is held as LangChain's OpenAI parser holds it
// (parseToolCall, else makeInvalidToolCall). The answer is made of the caller's own dicts: each
// returned message carries its input position in `id` (kept by every copy trimMessages makes), and
// a partial is that dict with the partial's content. Re-serialising LangChain's objects would drop
// what they do not model (a call's `type`, a null content, unknown keys, an argument string's
// spacing) and flag the adapter's loss as the library's.
//
// The counter: LangChain JS ships none that runs offline (its tiktoken helper downloads the ranks,
// a chat model counts by calling one), so both `trim` and `count` use a port of langchain-core's
// (Python) documented count_tokens_approximately: per message ceil(chars / 4) + 3, the chars being
// the string content (else its JSON), the role, the name, a tool message's id and, for an
// assistant message whose content is not a list, its tool calls' JSON. One change: the invalid
// calls (arguments that are not JSON) count too, since they are sent as well (without the parse
// error LangChain keeps beside them, which is not).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import {
  AIMessage,
  coerceMessageLikeToMessage,
  trimMessages,
} from "@langchain/core/messages";
import { makeInvalidToolCall, parseToolCall } from "@langchain/core/output_parsers/openai_tools";

const require = createRequire(import.meta.url);
const kit = require(
  process.env.CTXMODEL_TARGET_KIT ??
    fileURLToPath(new URL("../../../ctxmodel/targetkit/js/ctxmodel-target.cjs", import.meta.url)),
);
const VERSION = require("@langchain/core/package.json").version;

const TAG = "ctxmodel-input-";
const CHARS_PER_TOKEN = 4;
const EXTRA_TOKENS_PER_MESSAGE = 3;

// ---- our dicts to LangChain's messages and back ----------------------------------------------------

/** The keys LangChain reads; the others are the caller's, restored from its own dict. */
function known(message) {
  const out = { role: message.role, content: message.content ?? "" };
  for (const key of ["name", "tool_calls", "tool_call_id"]) {
    if (message[key] !== undefined && message[key] !== null) out[key] = structuredClone(message[key]);
  }
  return out;
}

function convertOne(message, index) {
  if (!message || typeof message !== "object" || Array.isArray(message)) {
    throw new kit.TargetInputError(`messages.${index}: expected a message object`);
  }
  const fields = { ...known(message), id: `${TAG}${index}` };
  try {
    return coerceMessageLikeToMessage(fields);
  } catch (err) {
    if (fields.role !== "assistant" || !Array.isArray(fields.tool_calls)) throw err;
  }
  // A call whose arguments are not JSON: held as LangChain's OpenAI tool-call parser holds it.
  const toolCalls = [];
  const invalid = [];
  for (const call of fields.tool_calls) {
    try {
      const parsed = parseToolCall(call, { returnId: true });
      if (parsed !== undefined) toolCalls.push(parsed);
    } catch (err) {
      invalid.push(makeInvalidToolCall(call, String(err && err.message)));
    }
  }
  const { role: _role, tool_calls: _calls, ...rest } = fields;
  return new AIMessage({ ...rest, tool_calls: toolCalls, invalid_tool_calls: invalid });
}

function convert(messages) {
  return messages.map(convertOne);
}

/** What the library reads of a message, for comparing it before and after a call. */
function snapshot(message) {
  return JSON.stringify([
    message.getType(),
    message.id,
    message.name,
    message.content,
    message.tool_calls,
    message.invalid_tool_calls,
    message.tool_call_id,
    message.additional_kwargs,
  ]);
}

/**
 * The caller's dicts for `result`: the input message each came from, with a cut content. An entry
 * that is no message at all (trimMessages with includeSystem answers `[undefined]` when not even
 * the system message fits) is passed on as what serialising it sends: null.
 */
function back(result, messages, converted) {
  return result.map((message) => {
    if (message === undefined || message === null) return null;
    const tag = typeof message.id === "string" && message.id.startsWith(TAG) ? Number(message.id.slice(TAG.length)) : NaN;
    if (!Number.isInteger(tag) || tag < 0 || tag >= messages.length) {
      throw new Error(`the trimmer returned a message it was not given: ${JSON.stringify(message).slice(0, 200)}`);
    }
    const original = messages[tag];
    const before = converted[tag];
    for (const key of ["tool_calls", "invalid_tool_calls", "tool_call_id", "name", "additional_kwargs"]) {
      if (JSON.stringify(message[key]) !== JSON.stringify(before[key])) {
        throw new Error(`the trimmer changed ${key} of messages.${tag}, which a dict of the input cannot say`);
      }
    }
    if (message.getType() !== before.getType()) {
      throw new Error(`the trimmer changed the type of messages.${tag} (${before.getType()} to ${message.getType()})`);
    }
    if (JSON.stringify(message.content) === JSON.stringify(before.content)) return original;
    return { ...original, content: structuredClone(message.content) };
  });
}

// ---- the counter ------------------------------------------------------------------------------------

function openaiRole(message) {
  const type = message.getType();
  if (type === "human") return "user";
  if (type === "ai") return "assistant";
  if (type === "system") return message.additional_kwargs?.__openai_role__ === "developer" ? "developer" : "system";
  return type;
}

/** count_tokens_approximately (langchain-core, Python), on LangChain JS messages. */
function countApproximately(messages) {
  let tokens = 0;
  for (const message of messages) {
    let chars = typeof message.content === "string" ? message.content.length : JSON.stringify(message.content).length;
    // An invalid call counts as what is sent for it (its id, name and raw arguments), not the parse
    // error LangChain keeps beside it: with the error counted, a broken call's longer error text
    // made it count more than a longer valid call.
    const invalid = (message.invalid_tool_calls ?? []).map(({ name, args, id, type }) => ({ name, args, id, type }));
    const calls = [...(message.tool_calls ?? []), ...invalid];
    if (message.getType() === "ai" && !Array.isArray(message.content) && calls.length) {
      chars += JSON.stringify(calls).length;
    }
    if (message.getType() === "tool") chars += String(message.tool_call_id).length;
    chars += openaiRole(message).length;
    if (message.name) chars += message.name.length;
    tokens += Math.ceil(chars / CHARS_PER_TOKEN) + EXTRA_TOKENS_PER_MESSAGE;
  }
  return Math.ceil(tokens);
}

// ---- the ops ----------------------------------------------------------------------------------------

async function trimWith(options, params) {
  const messages = kit.messagesOf(params);
  if (!Number.isInteger(params.maxTokens)) throw new kit.TargetInputError("params.maxTokens: expected an integer");
  const converted = convert(messages);
  const given = convert(messages);
  const before = given.map(snapshot);
  const kept = await trimMessages(given, { ...options, maxTokens: params.maxTokens, tokenCounter: countApproximately });
  const changed = given.findIndex((message, i) => snapshot(message) !== before[i]);
  if (changed >= 0) {
    const err = new Error(`trimMessages changed the caller's LangChain message ${changed} in place`);
    err.name = "LibraryMutatedItsInput";
    err.stack = "";
    throw err;
  }
  return { messages: back(kept, messages, converted) };
}

/** Convert, let the library copy every message (a budget nothing exceeds), convert back. */
async function roundtrip(params) {
  const messages = kit.messagesOf(params);
  const converted = convert(messages);
  const kept = await trimMessages(convert(messages), {
    strategy: "last",
    maxTokens: Number.MAX_SAFE_INTEGER,
    tokenCounter: countApproximately,
  });
  if (kept.length !== messages.length) throw new Error(`the round trip kept ${kept.length} of ${messages.length} messages`);
  return { messages: back(kept, messages, converted) };
}

const NONE = { trimSystem: "any", trimLastUser: "any" };
const FIRST_SYSTEM = { trimSystem: "first", trimLastUser: "any" };

// "last" keeps the newest messages that fit (trimKeep=newest, the default), "first" the oldest
// (trimKeep=oldest); endOn then cuts the kept window back until a named type ends it, so a turn
// ending with the assistant's answer is cut by design (trimKeep=any).
// name -> [the trimMessages options, the policies its docs promise]
const CONFIGURATIONS = {
  "last-recipe": [
    { strategy: "last", startOn: "human", endOn: ["human", "tool"], includeSystem: true },
    { ...FIRST_SYSTEM, trimKeep: "any" },
  ],
  last: [{ strategy: "last" }, NONE],
  "last-system": [{ strategy: "last", includeSystem: true }, FIRST_SYSTEM],
  "last-start-human-system": [{ strategy: "last", startOn: "human", includeSystem: true }, FIRST_SYSTEM],
  "last-end-human-tool": [{ strategy: "last", endOn: ["human", "tool"] }, { ...NONE, trimKeep: "any" }],
  "last-partial": [
    { strategy: "last", startOn: "human", includeSystem: true, allowPartial: true },
    { ...FIRST_SYSTEM, trimPartial: "yes" },
  ],
  first: [{ strategy: "first" }, { ...NONE, trimKeep: "oldest" }],
  "first-end-human-tool": [{ strategy: "first", endOn: ["human", "tool"] }, { ...NONE, trimKeep: "any" }],
  "first-partial": [{ strategy: "first", allowPartial: true }, { ...NONE, trimPartial: "yes", trimKeep: "oldest" }],
};

const name = kit.selectConfiguration(Object.keys(CONFIGURATIONS));
const [options, policies] = CONFIGURATIONS[name];

kit.serve({
  name: `@langchain/core trimMessages ${name}`,
  version: VERSION,
  dialect: "openai-chat",
  tokenizer: { encoding: "o200k_base", fudge: 1 },
  policies: { trimBudget: "tokens", trimPartial: "no", ...policies },
  describe: { options: JSON.stringify(options) },
  ops: {
    trim: (params) => trimWith(options, params),
    count: (params) => ({ tokens: countApproximately(convert(kit.messagesOf(params))) }),
    roundtrip,
  },
});
