// The Vercel AI SDK's pruneMessages (npm `ai`, 6.x) as a `trim` target in the openai-chat dialect
// (contract §10), one configuration named on the command line; `--list` prints the names:
//
//   python3 examples/targets/install.py vercel-ai
//   ctxmodel check --target exec:"node examples/targets/vercel-ai/target.mjs docs-example" --profile ci
//
// pruneMessages takes no budget (trimBudget=none): it removes reasoning parts, tool calls with
// their results and approvals, and then the messages its pruning left empty. It reads the SDK's
// ModelMessage, so each openai-chat dict becomes one, checked against the SDK's own
// modelMessageSchema:
//
// - system and developer: a system message (its content a string; text parts joined);
// - user: a string, or text parts and image parts (an image_url's url);
// - assistant: a string when it makes no call; else parts: a reasoning part for a provider's
//   `reasoning_content`, a text part for a non-empty string content (or each text part), then one
//   tool-call part per call (input: the parsed arguments, the raw string when they are not JSON);
// - tool: a tool message holding one tool-result part (output text, or content of text parts),
//   its toolName the name of the call it answers.
//
// Each ModelMessage carries its input position in providerOptions (kept by the spread pruneMessages
// copies a message with), and the answer is made of the caller's own dicts: a message the pruner
// did not change is its input dict; one it changed is that dict less what it pruned (the calls it
// removed from `tool_calls`, the key itself when none is left, `reasoning_content` when the
// reasoning went). A tool message whose result was pruned sends nothing, so under
// emptyMessages "keep" its empty ModelMessage is no message of the answer.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { modelMessageSchema, pruneMessages } from "ai";

const require = createRequire(import.meta.url);
const kit = require(
  process.env.CTXMODEL_TARGET_KIT ??
    fileURLToPath(new URL("../../../ctxmodel/targetkit/js/ctxmodel-target.cjs", import.meta.url)),
);
const VERSION = require("ai/package.json").version;

const TAG = "ctxmodel";

// ---- our dicts to ModelMessage and back ---------------------------------------------------------------

function textOf(content, where) {
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every((p) => p && p.type === "text" && typeof p.text === "string")) {
    return content.map((p) => p.text).join("");
  }
  throw new kit.TargetInputError(`${where}: expected a string or text parts`);
}

function userPart(part, where) {
  if (part && part.type === "text" && typeof part.text === "string") return { type: "text", text: part.text };
  if (part && part.type === "image_url" && part.image_url && typeof part.image_url.url === "string") {
    return { type: "image", image: part.image_url.url };
  }
  throw new kit.TargetInputError(`${where}: a user part of type ${JSON.stringify(part && part.type)} is not mapped`);
}

function parsedArguments(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toolCallPart(call, where) {
  if (!call || call.type !== "function" || !call.function || typeof call.id !== "string") {
    throw new kit.TargetInputError(`${where}: expected a function call with an id`);
  }
  return {
    type: "tool-call",
    toolCallId: call.id,
    toolName: String(call.function.name),
    input: parsedArguments(String(call.function.arguments ?? "")),
  };
}

function convertOne(message, index, names) {
  const where = `messages.${index}`;
  if (!message || typeof message !== "object" || Array.isArray(message)) {
    throw new kit.TargetInputError(`${where}: expected a message object`);
  }
  const providerOptions = { [TAG]: { input: index } };
  const { role, content } = message;
  if (role === "system" || role === "developer") {
    return { role: "system", content: textOf(content, `${where}.content`), providerOptions };
  }
  if (role === "user") {
    const parts = Array.isArray(content) ? content.map((p, k) => userPart(p, `${where}.content.${k}`)) : content;
    if (typeof parts !== "string" && !Array.isArray(parts)) throw new kit.TargetInputError(`${where}.content: expected content`);
    return { role: "user", content: parts, providerOptions };
  }
  if (role === "assistant") {
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
    const reasoning = typeof message.reasoning_content === "string" ? message.reasoning_content : undefined;
    if (!calls.length && reasoning === undefined && typeof content === "string") {
      return { role: "assistant", content, providerOptions };
    }
    const parts = [];
    if (reasoning !== undefined) parts.push({ type: "reasoning", text: reasoning });
    if (typeof content === "string" && content !== "") parts.push({ type: "text", text: content });
    else if (Array.isArray(content)) parts.push({ type: "text", text: textOf(content, `${where}.content`) });
    calls.forEach((call, k) => parts.push(toolCallPart(call, `${where}.tool_calls.${k}`)));
    return { role: "assistant", content: parts, providerOptions };
  }
  if (role === "tool") {
    const id = message.tool_call_id;
    if (typeof id !== "string") throw new kit.TargetInputError(`${where}.tool_call_id: expected a string`);
    textOf(content, `${where}.content`); // a string or text parts
    const output =
      typeof content === "string"
        ? { type: "text", value: content }
        : { type: "content", value: content.map((p) => ({ type: "text", text: p.text })) };
    const toolName = names.get(id) ?? (typeof message.name === "string" ? message.name : "unknown");
    return { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName, output }], providerOptions };
  }
  throw new kit.TargetInputError(`${where}.role: ${JSON.stringify(role)} is not mapped onto a ModelMessage`);
}

function convert(messages) {
  const names = new Map();
  for (const m of messages) {
    for (const call of (m && Array.isArray(m.tool_calls) ? m.tool_calls : [])) {
      if (call && typeof call.id === "string" && call.function) names.set(call.id, String(call.function.name));
    }
  }
  return messages.map((message, index) => {
    const converted = convertOne(message, index, names);
    const checked = modelMessageSchema.safeParse(converted);
    if (!checked.success) {
      throw new Error(`messages.${index}: not a ModelMessage: ${checked.error.message.slice(0, 300)}`);
    }
    return converted;
  });
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The caller's dict for one pruned ModelMessage, or null when it sends nothing. */
function backOne(pruned, messages, converted) {
  const index = pruned.providerOptions?.[TAG]?.input;
  if (!Number.isInteger(index) || index < 0 || index >= messages.length) {
    throw new Error(`the pruner returned a message it was not given: ${JSON.stringify(pruned).slice(0, 200)}`);
  }
  const original = messages[index];
  const before = converted[index];
  if (pruned.role !== before.role) throw new Error(`the pruner changed the role of messages.${index}`);
  if (same(pruned.content, before.content)) return original;
  if (pruned.role === "tool") {
    if (pruned.content.length === 0) return null;
    throw new Error(`the pruner changed the result of messages.${index} into ${JSON.stringify(pruned.content).slice(0, 200)}`);
  }
  if (pruned.role !== "assistant" || !Array.isArray(pruned.content)) {
    throw new Error(`the pruner changed the content of messages.${index}, a ${pruned.role} message`);
  }
  const kept = pruned.content;
  const keptOf = (type) => kept.filter((p) => p.type === type);
  const beforeOf = (type) => before.content.filter((p) => p.type === type);
  if (!same(keptOf("text"), beforeOf("text"))) throw new Error(`the pruner changed the text of messages.${index}`);
  const unknown = kept.filter((p) => !["text", "reasoning", "tool-call"].includes(p.type));
  if (unknown.length) throw new Error(`the pruner added parts to messages.${index}: ${JSON.stringify(unknown).slice(0, 200)}`);
  const out = { ...original };
  if (keptOf("reasoning").length === 0 && "reasoning_content" in original) delete out.reasoning_content;
  else if (!same(keptOf("reasoning"), beforeOf("reasoning"))) throw new Error(`the pruner changed the reasoning of messages.${index}`);
  const keptCalls = keptOf("tool-call");
  const byId = new Map(beforeOf("tool-call").map((p, k) => [p.toolCallId, [p, original.tool_calls[k]]]));
  const calls = keptCalls.map((p) => {
    const known = byId.get(p.toolCallId);
    if (!known || !same(p, known[0])) throw new Error(`the pruner changed a tool call of messages.${index}`);
    return known[1];
  });
  if (calls.length) out.tool_calls = calls;
  else delete out.tool_calls;
  return out;
}

function back(pruned, messages, converted) {
  return pruned.map((m) => backOne(m, messages, converted)).filter((m) => m !== null);
}

// ---- the ops ----------------------------------------------------------------------------------------

function pruneWith(options, params) {
  const messages = kit.messagesOf(params);
  const converted = convert(messages);
  const given = convert(messages);
  const pruned = pruneMessages({ messages: given, ...options });
  if (!same(given, converted)) {
    const err = new Error("pruneMessages changed the caller's ModelMessages in place");
    err.name = "LibraryMutatedItsInput";
    err.stack = "";
    throw err;
  }
  return { messages: back(pruned, messages, converted) };
}

/** Convert, let the library copy every message (nothing pruned, nothing empty removed), convert back. */
function roundtrip(params) {
  const messages = kit.messagesOf(params);
  const converted = convert(messages);
  const copied = pruneMessages({ messages: convert(messages), reasoning: "none", toolCalls: "none", emptyMessages: "keep" });
  if (copied.length !== messages.length) throw new Error(`the round trip kept ${copied.length} of ${messages.length} messages`);
  return { messages: back(copied, messages, converted) };
}

// name -> the pruneMessages options (every option named, the defaults included, so describe says all)
const CONFIGURATIONS = {
  // The SDK docs' example (the reference page of pruneMessages).
  "docs-example": { reasoning: "before-last-message", toolCalls: "before-last-2-messages", emptyMessages: "remove" },
  "tool-calls-all": { reasoning: "none", toolCalls: "all", emptyMessages: "remove" },
  "tool-calls-before-last-message": { reasoning: "none", toolCalls: "before-last-message", emptyMessages: "remove" },
  "tool-calls-before-last-message-keep-empty": {
    reasoning: "none",
    toolCalls: "before-last-message",
    emptyMessages: "keep",
  },
  "tool-calls-read-file": { reasoning: "none", toolCalls: [{ type: "all", tools: ["read_file"] }], emptyMessages: "remove" },
  "reasoning-all": { reasoning: "all", toolCalls: "none", emptyMessages: "remove" },
  "reasoning-before-last-message": { reasoning: "before-last-message", toolCalls: "none", emptyMessages: "remove" },
  defaults: { reasoning: "none", toolCalls: [], emptyMessages: "remove" },
};

// What each `reasoning` value declares (contract §10.8): "none" keeps it; "all" strips it, for a
// provider that takes a message with or without it; "before-last-message" strips it from every
// message but the last, so that the reasoning the model is working from stays: declared for the
// providers that need the current turn's reasoning back (Anthropic thinking, DeepSeek thinking mode).
const REASONING_POLICIES = {
  none: {},
  all: { trimReasoning: "strip" },
  "before-last-message": { trimReasoning: "strip", reasoningRequired: "current-turn" },
};

// What each option declares it removes (contract §10.10): the SDK's own vocabulary. A toolCalls
// array naming tools has no policy to say it, so it declares none (and is not judged on it).
const PRUNE_CALLS = (toolCalls) => (typeof toolCalls === "string" && toolCalls !== "none" ? toolCalls : "no");
const PRUNE_REASONING = { none: "no", all: "all", "before-last-message": "before-last-message" };

const name = kit.selectConfiguration(Object.keys(CONFIGURATIONS));
const options = CONFIGURATIONS[name];

kit.serve({
  name: `ai pruneMessages ${name}`,
  version: VERSION,
  dialect: "openai-chat",
  // It counts nothing: no budget (trimBudget=none) and no count op. The field is the handshake's.
  tokenizer: { encoding: "o200k_base", fudge: 1 },
  // Its unit is a call with its results: an assistant message less the calls pruned with their
  // results is what it is documented to send (contract §10, trimToolCalls=pairs).
  policies: {
    trimBudget: "none", trimSystem: "keep", trimLastUser: "keep", trimPartial: "no", trimToolCalls: "pairs",
    ...REASONING_POLICIES[options.reasoning],
    pruneCalls: PRUNE_CALLS(options.toolCalls),
    pruneReasoning: PRUNE_REASONING[options.reasoning],
  },
  describe: { options: JSON.stringify(options) },
  ops: {
    trim: (params) => pruneWith(options, params),
    roundtrip,
  },
});
