"use strict";
// The op mapping for a Roo-Code-family agent (Roo-Code, Zoo-Code): each op calls the agent's own
// functions the way its Task calls them, with an Anthropic provider serving a Claude model
// (supportsImages, no preserveReasoning). Shared by examples/targets/roo-code/target.cjs and
// zoo-code/target.cjs; the agent's code is the bundle build.mjs makes from the user's checkout.
//
//   effective  getEffectiveApiHistory(messages)
//   normalize  the append-time repair, as Task.addToApiConversationHistory does it, for each message
//              of the input in turn (the history stored so far is what the message is checked
//              against). Summaries and truncation markers are put in place as they are: context
//              management writes them, nothing appends them. The `ts` the Task stamps at append time
//              is put back to the message's own (the input is the history as stored).
//   request    what Task.attemptApiRequest sends: getEffectiveApiHistory, getMessagesSinceLastSummary,
//              mergeConsecutiveApiMessages(user), maybeRemoveImageBlocks, buildCleanConversationHistory,
//              then the Anthropic provider's filterNonAnthropicBlocks. (The provider then marks the
//              last block of the last two user messages with cache_control; that adds a key and
//              changes nothing the gate judges, so it is left out.)
//   recover    manageContext with condensing off (the sliding-window path; condensing needs a model),
//              totalTokens as the harness sends it (contract §4: the previous request's usage, which
//              is what Task passes), the agent's own provider countTokens.
//   count      the agent's countTokens (tiktoken o200k_base, fudge 1.5 per call): the system prompt
//              in one call, the messages' blocks in another.
// Nothing here re-implements the agent: Task's methods run on a stand-in `this` that holds only
// what they read (api, apiConfiguration, apiConversationHistory) and saves nowhere.

const TASK_ID = "ctxmodel";
const MODEL = { id: "claude-sonnet-4-5", info: { contextWindow: 200000, maxTokens: 64000, supportsImages: true, supportsPromptCache: true } };

function blocksOf(message) {
  return Array.isArray(message.content) ? message.content : [{ type: "text", text: String(message.content ?? "") }];
}

function makeOps(agent, kit) {
  class Provider extends agent.BaseProvider {
    getModel() {
      return MODEL;
    }
    // eslint-disable-next-line require-yield
    async *createMessage() {
      throw new Error("the adapter never sends a request");
    }
  }
  const api = new Provider();
  const task = agent.Task.prototype;
  const standIn = (history) => ({
    taskId: TASK_ID,
    api,
    apiConfiguration: { apiProvider: "anthropic", apiModelId: MODEL.id },
    apiConversationHistory: history,
    saveApiConversationHistory: async () => true,
  });

  async function append(messages) {
    const self = standIn([]);
    for (const message of messages) {
      if (message && (message.isSummary === true || message.isTruncationMarker === true)) {
        self.apiConversationHistory.push(message);
        continue;
      }
      await task.addToApiConversationHistory.call(self, message);
      const stored = self.apiConversationHistory[self.apiConversationHistory.length - 1];
      if (stored !== message) {
        if (Object.prototype.hasOwnProperty.call(message, "ts")) stored.ts = message.ts;
        else delete stored.ts;
      }
    }
    return self.apiConversationHistory;
  }

  function request(messages) {
    const self = standIn(messages);
    const effectiveHistory = agent.getEffectiveApiHistory(self.apiConversationHistory);
    const messagesSinceLastSummary = agent.getMessagesSinceLastSummary(effectiveHistory);
    const mergedForApi = agent.mergeConsecutiveApiMessages(messagesSinceLastSummary, { roles: ["user"] });
    const messagesWithoutImages = agent.maybeRemoveImageBlocks(mergedForApi, self.api);
    const cleanConversationHistory = task.buildCleanConversationHistory.call(self, messagesWithoutImages);
    return agent.filterNonAnthropicBlocks(cleanConversationHistory);
  }

  async function count(messages, systemPrompt) {
    const system = systemPrompt ? await api.countTokens([{ type: "text", text: systemPrompt }]) : 0;
    return system + (await api.countTokens(messages.flatMap(blocksOf)));
  }

  /** Contract §4's totalTokens, for a harness that does not send it: counted by the agent's counter. */
  async function totalTokensOf(messages, systemPrompt) {
    const effective = agent.getEffectiveApiHistory(messages);
    const system = await api.countTokens([{ type: "text", text: systemPrompt }]);
    const last = effective.length ? await api.countTokens(blocksOf(effective[effective.length - 1])) : 0;
    return system + (await api.countTokens(effective.flatMap(blocksOf))) - last;
  }

  async function recover(params) {
    const messages = kit.messagesOf(params);
    const systemPrompt = typeof params.systemPrompt === "string" ? params.systemPrompt : "";
    const totalTokens =
      typeof params.totalTokens === "number" ? params.totalTokens : await totalTokensOf(messages, systemPrompt);
    const result = await agent.manageContext({
      messages,
      totalTokens,
      contextWindow: params.contextWindow,
      maxTokens: params.maxTokens,
      apiHandler: api,
      autoCondenseContext: false,
      autoCondenseContextPercent: 100,
      systemPrompt,
      taskId: TASK_ID,
      profileThresholds: {},
      currentProfileId: "default",
    });
    return {
      messages: result.messages,
      error: result.error || null,
      messagesRemoved: result.messagesRemoved ?? 0,
      prevContextTokens: result.prevContextTokens,
      newContextTokens: result.newContextTokensAfterTruncation ?? result.prevContextTokens,
      truncationId: result.truncationId ?? null,
    };
  }

  return {
    effective: (params) => ({ messages: agent.getEffectiveApiHistory(kit.messagesOf(params)) }),
    normalize: async (params) => ({ messages: await append(kit.messagesOf(params)) }),
    request: (params) => ({ messages: request(kit.messagesOf(params)) }),
    recover,
    count: async (params) => ({
      tokens: await count(kit.messagesOf(params), typeof params.systemPrompt === "string" ? params.systemPrompt : ""),
    }),
  };
}

/**
 * The kit spec for the agent bundled into $CTXMODEL_AGENT_BUILD, else `adapterDir`/build (see
 * bundle.mjs), or an error that names the folder it read, where that folder came from, and how to
 * build it.
 */
function agentSpec({ adapterDir, kit, name, policies }) {
  const path = require("path");
  const fs = require("fs");
  const fromEnv = Boolean(process.env.CTXMODEL_AGENT_BUILD);
  const buildDir = path.resolve(fromEnv ? process.env.CTXMODEL_AGENT_BUILD : path.join(adapterDir, "build"));
  const bundle = path.join(buildDir, "agent.cjs");
  if (!fs.existsSync(bundle)) {
    const rel = path.relative(process.cwd(), path.join(adapterDir, "build.mjs"));
    const run = `run  node ${rel} PATH-TO-YOUR-${name.toUpperCase()}-CHECKOUT`;
    throw new NoBuild(
      fromEnv
        ? `${name}: no build in ${buildDir} (from CTXMODEL_AGENT_BUILD): it has no agent.cjs\n${run} --out ${buildDir}`
        : `${name}: no build in ${buildDir} (CTXMODEL_AGENT_BUILD is not set): it has no agent.cjs\n` +
            `${run}, or set CTXMODEL_AGENT_BUILD to the DIR of a build with --out DIR`,
    );
  }
  const meta = JSON.parse(fs.readFileSync(path.join(buildDir, "agent.json"), "utf8"));
  const agent = require(bundle);
  return {
    name,
    version: meta.commit ? `${meta.version}+${meta.commit}` : meta.version,
    tokenizer: "o200k_base",
    policies,
    ops: makeOps(agent, kit),
  };
}

/** The adapter has no bundle to load: its message says which folder was read and what to run. */
class NoBuild extends Error {}

/**
 * Serves the agent of agentSpec; without a build, prints only the message (the gate shows the last
 * lines of a target's stderr when it dies before replying, which a stack trace would fill) and exits 1.
 */
function serveAgent({ adapterDir, kit, name, policies }) {
  try {
    return kit.serve(agentSpec({ adapterDir, kit, name, policies }));
  } catch (err) {
    if (!(err instanceof NoBuild)) throw err;
    process.stderr.write(err.message + "\n");
    process.exit(1);
  }
}

/**
 * ctxmodel's JavaScript target kit: $CTXMODEL_TARGET_KIT, else the copy in this repository, else
 * where the installed ctxmodel says it is (`ctxmodel target-kit --path --module cjs`), so the adapter
 * folders also work when copied into an agent's own repository.
 */
function loadKit() {
  const path = require("path");
  const fs = require("fs");
  const candidates = [
    process.env.CTXMODEL_TARGET_KIT,
    path.join(__dirname, "..", "..", "..", "ctxmodel", "targetkit", "js", "ctxmodel-target.cjs"),
  ];
  for (const file of candidates) if (file && fs.existsSync(file)) return require(file);
  try {
    const { execFileSync } = require("child_process");
    const file = execFileSync(process.env.CTXMODEL || "ctxmodel", ["target-kit", "--path", "--module", "cjs"], {
      stdio: ["ignore", "pipe", "ignore"],
    })
      .toString()
      .trim();
    return require(file);
  } catch {
    throw new Error(
      "cannot find ctxmodel's JavaScript target kit: install ctxmodel, or set CTXMODEL_TARGET_KIT to what " +
        "`ctxmodel target-kit --path --module cjs` prints",
    );
  }
}

module.exports = { MODEL, NoBuild, agentSpec, loadKit, makeOps, serveAgent };
