#!/usr/bin/env node
// node examples/targets/roo-family/text_cuts.mjs PATH-TO-A-ROO-CODE-OR-ZOO-CODE-CHECKOUT [--out DIR] > cuts.json
// ctxmodel validate cuts.json
//
// The agents cut tool output to a size before it enters the history: the terminal output put in the
// environment details (`truncateOutput` with a character limit, via `compressTerminalOutput`), a
// search result line (`truncateLine`), the head and tail of a command's output the model is shown
// (`OutputInterceptor`). Each counts UTF-16 code units, so a cut that falls between an emoji's two
// halves leaves one half in the request, and the API answers 400 (domain §5.6). These helpers are
// not ops of the contract, so the gate does not call them; this script does, from the checkout's
// own source, with outputs holding emoji where their limits fall, and writes the history the agent
// would send: one tool call per helper, its result the helper's output.
//
// esbuild comes from the build (node examples/targets/roo-code/build.mjs CHECKOUT [--out DIR]: the
// same --out, or CTXMODEL_AGENT_BUILD). Nothing is written but stdout and, for the interceptor, a
// temporary folder that is removed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { builtinModules, createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { loadEsbuild, moduleDirs, packagesHome } from "./bundle.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const outDir = outAt >= 0 ? args[outAt + 1] : process.env.CTXMODEL_AGENT_BUILD || null;
const checkout = args.find((a, i) => !a.startsWith("--") && i !== outAt + 1);
if (!checkout || !fs.existsSync(path.join(checkout, "src", "integrations", "misc", "extract-text.ts"))) {
  console.error("usage: node text_cuts.mjs PATH-TO-A-ROO-CODE-OR-ZOO-CODE-CHECKOUT [--out DIR] (the checkout's src/integrations is missing)");
  process.exit(2);
}
const root = path.resolve(checkout);
const agentDir = fs.existsSync(path.join(root, "src", "package.json"))
  ? path.join(here, "..", JSON.parse(fs.readFileSync(path.join(root, "src", "package.json"), "utf8")).name === "zoo-code" ? "zoo-code" : "roo-code")
  : path.join(here, "..", "roo-code");
const esbuild = loadEsbuild(moduleDirs(root, packagesHome(agentDir, outDir)));

const entry = `
import { truncateOutput } from "./src/integrations/misc/extract-text"
import { truncateLine } from "./src/services/ripgrep/index"
import { OutputInterceptor } from "./src/integrations/terminal/OutputInterceptor"
export { truncateOutput, truncateLine, OutputInterceptor }
`;
// Workspace packages from the checkout's source; every other package is left out (a stub at run
// time): the three helpers use none of them, the modules around them do.
const workspace = {
  name: "workspace",
  setup(build) {
    build.onResolve({ filter: /^@roo-code\/types$/ }, () => ({ path: path.join(root, "packages", "types", "src", "index.ts") }));
    build.onResolve({ filter: /^[^./]/ }, (a) => (a.kind === "entry-point" ? undefined : { path: a.path, external: true }));
  },
};
const built = await esbuild.build({
  stdin: { contents: entry, resolveDir: root, loader: "ts" },
  bundle: true, platform: "node", format: "cjs", write: false, logLevel: "silent", plugins: [workspace],
});
const builtins = new Set(builtinModules);
const realRequire = createRequire(import.meta.url);
const stub = new Proxy(function () {}, { get: (_, key) => (key === "__esModule" ? false : stub), apply: () => stub, construct: () => stub });
const mod = { exports: {} };
new Function("require", "module", "exports", built.outputFiles[0].text)(
  (spec) => (spec.startsWith("node:") || builtins.has(spec.split("/")[0]) ? realRequire(spec) : stub), mod, mod.exports);
const { truncateOutput, truncateLine, OutputInterceptor } = mod.exports;

// The limits are the agents' own: 50,000 characters in compressTerminalOutput, 500 in truncateLine,
// the "small" preview of the interceptor. Each output is emoji (two code units each) shifted by one
// ASCII character, so that the cut lands between two halves.
const terminal = truncateOutput("x" + "\u{1F44D}".repeat(30000) + "\n" + "\u{1F600}".repeat(30000), 500, 50_000);
const line = truncateLine("x" + "\u{1F44D}".repeat(400));
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ctxmodel-cuts-"));
let preview;
try {
  const interceptor = new OutputInterceptor({ executionId: "1", taskId: "t", command: "cat notes.md", storageDir: scratch, previewSize: "small" });
  interceptor.write("x" + "\u{1F680}".repeat(20000));
  preview = (await interceptor.finalize()).preview;
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}

const calls = [
  ["toolu_terminal", "execute_command", terminal],
  ["toolu_search", "search_files", line],
  ["toolu_preview", "execute_command", preview],
];
process.stdout.write(JSON.stringify([
  { role: "user", content: [{ type: "text", text: "run the commands" }] },
  { role: "assistant", content: calls.map(([id, name]) => ({ type: "tool_use", id, name, input: {} })) },
  { role: "user", content: calls.map(([id, , text]) => ({ type: "tool_result", tool_use_id: id, content: text })) },
]) + "\n");
