#!/usr/bin/env node
"use strict";
// ctxmodel target for Roo-Code's own history code (build it first):
//
//   node examples/targets/roo-code/build.mjs PATH-TO-YOUR-ROO-CODE-CHECKOUT
//   ctxmodel check --target exec:"node examples/targets/roo-code/target.cjs" --profile ci
//
// The op mapping is examples/targets/roo-family/adapter.cjs (shared with Zoo-Code); the policies
// below are what Roo-Code's code does, read from it (src/core/task/validateToolResultIds.ts,
// Task.addToApiConversationHistory, Task.attemptApiRequest / handleContextWindowExceededError).
const { loadKit, serveAgent } = require("../roo-family/adapter.cjs");

const kit = loadKit();

const POLICIES = {
  // After an assistant message, a result whose id is not one of its tool_use ids is moved onto the
  // tool_use at the same position among the results, if that id is still unused, else dropped
  // (validateAndFixToolResultIds); after a user message, results become "Tool result:\n..." text
  // (addToApiConversationHistory). relabel covers drop, to_text and the positional move.
  orphans: "relabel",
  // A last assistant message with tool_use is stored as it is; its results come when they come.
  trailing: "leave",
  // Missing results are put before everything else, present ones stay where they are: no order.
  resultOrder: "any",
  // One manageContext call per request; over budget, the API's context error makes the Task call it
  // again, up to MAX_CONTEXT_WINDOW_RETRIES (3) times.
  recoverSuccess: "converges",
  // The ops are only ever given what the Task stored: it removes a repeated tool_use id within a
  // message before storing it ("Pre-flight deduplication" in Task.ts), stores results (or
  // "interrupted" ones on resume) before the next assistant message, and cleanupAfterTruncation
  // removes tags whose summary or marker a rewind removed.
  inputs: "agent-stored",
};

serveAgent({ adapterDir: __dirname, kit, name: "Roo-Code", policies: POLICIES });
