#!/usr/bin/env node
// node examples/targets/roo-code/build.mjs PATH-TO-YOUR-ROO-CODE-CHECKOUT [--commit SHA] [--out DIR]
//
// Bundles the checkout's history code (src/core/condense, src/core/context-management,
// src/core/task/validateToolResultIds.ts, Task.ts's append-time repair and request shaping, the
// tiktoken counter) into build/agent.cjs, with stubs for vscode, telemetry, i18n and workers. esbuild
// (and tiktoken and zod, if the checkout has no node_modules) are installed into this folder's
// node_modules by npm. Nothing of the checkout is copied here except into build/ (not committed).
// With --out DIR the bundle and npm's packages go to DIR and DIR/node_modules, nothing into this
// folder; the target then reads the build named by CTXMODEL_AGENT_BUILD=DIR.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../roo-family/bundle.mjs";

await main({ agent: "Roo-Code", adapterDir: path.dirname(fileURLToPath(import.meta.url)), esbuildVersion: "^0.28.0" });
