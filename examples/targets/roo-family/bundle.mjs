// Bundling the history code of a Roo-Code-family checkout (Roo-Code, Zoo-Code) into one CommonJS
// file the adapter loads. Shared by examples/targets/roo-code/build.mjs and zoo-code/build.mjs.
//
// What is bundled as it is in the checkout (REAL_SOURCES): the modules that store, hide, repair,
// count and trim history, plus Task.ts itself, whose append-time repair
// (addToApiConversationHistory) and request shaping (buildCleanConversationHistory) are methods the
// adapter calls on a stand-in `this`. @roo-code/types is bundled from packages/types (it needs zod);
// tiktoken stays outside the bundle (it loads a WASM file) and is loaded from node_modules at run
// time. Everything else the checkout imports (webviews, MCP, terminal, cloud, the provider SDKs, vscode)
// is replaced by an inert stub generated from the importer's own import statement, with the
// behaviour the history code relies on supplied by stubs/*.mjs: telemetry (no-op captures), i18n
// (t(key) = key), workerpool (no pool: counting in process), vscode.
import fs from "node:fs";
import path from "node:path";
import { builtinModules, createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execFileSync, spawnSync } from "node:child_process";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STUBS = path.join(HERE, "stubs");

/** Modules of <checkout>/src bundled as they are (without extension); the ones a checkout lacks are skipped. */
export const REAL_SOURCES = [
  "core/condense/index",
  "core/context-management/index",
  "core/task/validateToolResultIds",
  "core/task/mergeConsecutiveApiMessages",
  "core/task/apiConversationHistory",
  "core/task/Task",
  "api/transform/image-cleaning",
  "api/transform/anthropic-filter",
  "api/providers/base-provider",
  "utils/countTokens",
  "utils/tiktoken",
  "shared/array",
];

/** Modules replaced by our stubs (with generated inert members for any other name imported). */
const OVERRIDES = {
  "@roo-code/telemetry": "telemetry.mjs",
  vscode: "vscode.mjs",
  workerpool: "workerpool.mjs",
  "src:i18n/index": "i18n.mjs",
};

/** npm packages bundled from node_modules (the checkout's, else the adapter's). */
const BUNDLED_PACKAGES = new Set(["zod"]);
/** npm packages left outside the bundle and required from an absolute path at run time. */
const NATIVE_PACKAGES = new Set(["tiktoken"]);

const EXTENSIONS = [".ts", ".tsx", ".mts", ".js", ".mjs", ".cjs", ".json"];

function fileExists(p) {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function resolveSource(base) {
  if (fileExists(base)) return base;
  for (const ext of EXTENSIONS) if (fileExists(base + ext)) return base + ext;
  for (const ext of EXTENSIONS) if (fileExists(path.join(base, "index" + ext))) return path.join(base, "index" + ext);
  return null;
}

function packageName(spec) {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const BUILTINS = new Set(builtinModules);
const isBuiltin = (spec) => spec.startsWith("node:") || BUILTINS.has(spec) || BUILTINS.has(packageName(spec));

function readJson(p) {
  try {
    return JSON.parse(fs.readFileSync(p, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Where npm packages are looked for: the checkout's own node_modules first, then `packagesDir`'s
 * (the adapter's folder, or the --out folder: see packagesHome).
 */
export function moduleDirs(checkout, packagesDir) {
  return [
    path.join(checkout, "src", "node_modules"),
    path.join(checkout, "node_modules"),
    path.join(checkout, "packages", "types", "node_modules"),
    path.join(packagesDir, "node_modules"),
  ];
}

/**
 * The folder whose node_modules receives what npm installs. A build with --out writes only under its
 * out folder, so the packages go to <out>/node_modules there (the bundle requires tiktoken by its
 * absolute path, so the out folder holds everything the target loads); without --out, the adapter's
 * own folder.
 */
export function packagesHome(adapterDir, outDir) {
  return outDir ? path.resolve(outDir) : adapterDir;
}

function resolvePackage(spec, dirs) {
  for (const dir of dirs) {
    try {
      if (!fs.existsSync(dir)) continue;
      // require.resolve from a file beside node_modules looks into it (then into the folders above).
      return createRequire(path.join(path.dirname(dir), "noop.js")).resolve(spec);
    } catch {
      /* next */
    }
  }
  return null;
}

/**
 * Whether `name` is installed in one of `dirs` (node_modules folders). A package whose exports
 * leave out its package.json (tiktoken) cannot be resolved by that name, so its folder is looked at.
 */
function hasPackage(name, dirs) {
  return dirs.some((dir) => fileExists(path.join(dir, name, "package.json"))) || Boolean(resolvePackage(`${name}/package.json`, dirs));
}

/** The versions the checkout asks for, of the packages the bundle needs from npm. */
export function wantedPackages(checkout) {
  const out = {};
  for (const file of [path.join(checkout, "src", "package.json"), path.join(checkout, "packages", "types", "package.json")]) {
    const pkg = readJson(file);
    if (!pkg) continue;
    for (const deps of [pkg.dependencies, pkg.devDependencies]) {
      for (const [name, version] of Object.entries(deps || {})) {
        if ((BUNDLED_PACKAGES.has(name) || NATIVE_PACKAGES.has(name)) && !out[name]) out[name] = version;
      }
    }
  }
  return out;
}

/**
 * Makes every package of `wanted` ({name: version}) resolvable: from the checkout's own node_modules
 * when it has them (a checkout after `pnpm install`), else from `packagesDir`'s (packagesHome's
 * answer), where npm installs them. One npm call names them all: npm prunes what an
 * earlier --no-save install put there.
 */
export function ensurePackages(packagesDir, checkoutDirs, wanted, { log = console.error } = {}) {
  const own = [path.join(packagesDir, "node_modules")];
  const needed = Object.entries(wanted).filter(([name]) => !hasPackage(name, checkoutDirs));
  if (needed.every(([name]) => hasPackage(name, own))) return;
  const specs = needed.map(([name, version]) => `${name}@${version}`);
  log(`installing ${specs.join(" ")} into ${own[0]} (npm)`);
  fs.mkdirSync(packagesDir, { recursive: true });
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  // --prefix: npm would otherwise install into the nearest folder above with a package.json.
  const flags = ["--prefix", packagesDir, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error"];
  const r = spawnSync(npm, ["install", ...flags, ...specs], {
    cwd: packagesDir,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) throw new Error(`npm install ${specs.join(" ")} failed (exit ${r.status}); is the npm registry reachable?`);
}

/** The esbuild module: the checkout's, else the one installed beside the build (packagesHome). */
export function loadEsbuild(dirs) {
  const file = resolvePackage("esbuild", dirs);
  if (!file) throw new Error("esbuild is not installed");
  return createRequire(file)(file);
}

// ---- stubs generated from the importer's own import statements --------------------------------------

const IMPORT_RE = /(?:^|[;\s])import\s+(type\s+)?([^;'"]*?)\s*from\s*(['"])([^'"]+)\3/g;
const EXPORT_FROM_RE = /(?:^|[;\s])export\s+(type\s+)?(\{[^}]*\})\s*from\s*(['"])([^'"]+)\3/g;
const IDENT = /^[A-Za-z_$][\w$]*$/;

/** The names `importer` takes from `spec`: {names: Set, hasDefault}. */
export function importedNames(source, spec) {
  const names = new Set();
  let hasDefault = false;
  const takeBraces = (braces) => {
    for (let item of braces.replace(/[{}]/g, "").split(",")) {
      item = item.trim();
      if (!item || item.startsWith("type ")) continue;
      const name = item.split(/\s+as\s+/)[0].trim();
      if (name === "default") hasDefault = true;
      else if (name) names.add(name.replace(/^["']|["']$/g, ""));
    }
  };
  for (const m of source.matchAll(IMPORT_RE)) {
    if (m[4] !== spec || m[1]) continue;
    let clause = m[2].trim();
    const braces = clause.match(/\{[^}]*\}/);
    if (braces) {
      takeBraces(braces[0]);
      clause = clause.replace(braces[0], "");
    }
    const ns = clause.match(/\*\s*as\s+([\w$]+)/);
    if (ns) {
      const member = new RegExp(`(?<![\\w$.])${ns[1].replace(/\$/g, "\\$")}\\s*\\.\\s*([A-Za-z_$][\\w$]*)`, "g");
      for (const use of source.matchAll(member)) names.add(use[1]);
      clause = clause.replace(ns[0], "");
    }
    if (/[A-Za-z_$]/.test(clause.replace(/,/g, ""))) hasDefault = true;
  }
  for (const m of source.matchAll(EXPORT_FROM_RE)) {
    if (m[4] === spec && !m[1]) takeBraces(m[2]);
  }
  return { names, hasDefault };
}

async function overrideExports(file) {
  return file ? Object.keys(await import(pathToFileURL(file).href)) : [];
}

async function stubModule({ importer, spec, override }) {
  const source = fs.readFileSync(importer, "utf8");
  const { names } = importedNames(source, spec);
  const provided = new Set(await overrideExports(override));
  const lines = [`import { stub } from ${JSON.stringify(path.join(STUBS, "runtime.mjs"))};`];
  const label = JSON.stringify(spec);
  if (override) lines.push(`import * as __o from ${JSON.stringify(override)};`, `export * from ${JSON.stringify(override)};`);
  lines.push(provided.has("default") ? "export { default } from " + JSON.stringify(override) + ";" : `export default stub(${label});`);
  let k = 0;
  for (const name of names) {
    if (provided.has(name)) continue;
    const local = `__s${k++}`;
    const exported = IDENT.test(name) ? name : JSON.stringify(name);
    lines.push(`const ${local} = stub(${JSON.stringify(`${spec}.${name}`)});`, `export { ${local} as ${exported} };`);
  }
  return lines.join("\n") + "\n";
}

// ---- the esbuild plugin ---------------------------------------------------------------------------------

function agentPlugin({ checkout, packagesDir, dirs, report }) {
  const src = path.join(checkout, "src");
  const typesSrc = path.join(checkout, "packages", "types", "src");
  const realFiles = new Set(REAL_SOURCES.map((rel) => resolveSource(path.join(src, rel))).filter(Boolean));
  const inside = (file, dir) => file === dir || file.startsWith(dir + path.sep);
  const stubbed = (importer, spec, override) => {
    report.stubbed.add(spec.startsWith(".") ? path.relative(src, path.resolve(path.dirname(importer), spec)) : spec);
    return { path: `${spec} (stub for ${path.relative(checkout, importer)})`, namespace: "agent-stub", pluginData: { importer, spec, override } };
  };
  return {
    name: "ctxmodel-agent",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        const { path: spec, importer } = args;
        if (isBuiltin(spec)) return { path: spec.replace(/^node:/, ""), external: true };
        if (spec.startsWith("@agent/")) {
          const file = resolveSource(path.join(src, spec.slice("@agent/".length)));
          if (!file) return { errors: [{ text: `${spec}: not found under ${src}` }] };
          report.real.add(path.relative(checkout, file));
          return { path: file };
        }
        if (importer && importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined; // a package's own imports
        if (inside(importer, STUBS)) return undefined; // our stubs import their runtime
        if (spec.startsWith(".") || path.isAbsolute(spec)) {
          const file = resolveSource(path.resolve(path.dirname(importer), spec));
          if (file && inside(file, typesSrc)) return { path: file };
          if (file && realFiles.has(file)) {
            report.real.add(path.relative(checkout, file));
            return { path: file };
          }
          if (file && inside(file, src)) {
            const rel = path.relative(src, file).replace(/\.[^./]+$/, "").split(path.sep).join("/");
            const override = OVERRIDES[`src:${rel}`];
            return stubbed(importer, spec, override && path.join(STUBS, override));
          }
          return undefined;
        }
        const name = packageName(spec);
        if (name === "@roo-code/types") {
          const file = resolveSource(path.join(typesSrc, "index"));
          if (file) return { path: file };
        }
        if (OVERRIDES[name]) return stubbed(importer, spec, path.join(STUBS, OVERRIDES[name]));
        if (NATIVE_PACKAGES.has(name)) {
          const file = resolvePackage(spec, dirs);
          if (!file) return { errors: [{ text: `${spec}: not installed (run the build again, or npm install in ${packagesDir})` }] };
          report.native.add(spec);
          return { path: file, external: true };
        }
        if (BUNDLED_PACKAGES.has(name)) {
          const file = resolvePackage(spec, dirs);
          if (!file) return { errors: [{ text: `${spec}: not installed (run the build again, or npm install in ${packagesDir})` }] };
          return { path: file };
        }
        return stubbed(importer, spec, undefined);
      });
      build.onLoad({ filter: /.*/, namespace: "agent-stub" }, async (args) => ({
        contents: await stubModule(args.pluginData),
        loader: "js",
        resolveDir: STUBS,
      }));
    },
  };
}

// ---- checks of what the adapter assumes about Task.ts ---------------------------------------------------

/** Lines of Task.ts the adapter's mapping follows; a checkout without one of them needs a look. */
export const TASK_ASSUMPTIONS = [
  ["the request pipeline starts from the effective history", /getEffectiveApiHistory\(this\.apiConversationHistory\)/],
  ["then the messages since the last summary", /getMessagesSinceLastSummary\(effectiveHistory\)/],
  ["then user messages are merged", /mergeConsecutiveApiMessages\(messagesSinceLastSummary,\s*\{\s*roles:\s*\["user"\]\s*\}\)/],
  ["then images are cleaned", /maybeRemoveImageBlocks\(mergedForApi,\s*this\.api\)/],
  ["then buildCleanConversationHistory", /this\.buildCleanConversationHistory\(messagesWithoutImages/],
  ["user messages are repaired when appended", /(validateAndFixToolResultIds|prepareApiConversationMessage)\(/],
  ["manageContext gets the previous request's usage as totalTokens", /manageContext\(\{[\s\S]{0,200}totalTokens:\s*contextTokens/],
];

export function checkTaskAssumptions(checkout) {
  const file = resolveSource(path.join(checkout, "src", "core", "task", "Task"));
  if (!file) return ["src/core/task/Task.ts is missing"];
  const source = fs.readFileSync(file, "utf8");
  const problems = [];
  for (const method of ["addToApiConversationHistory", "buildCleanConversationHistory"]) {
    if (!new RegExp(`\\n\\s*(?:private\\s+|public\\s+|protected\\s+)?(?:async\\s+)?${method}\\s*\\(`).test(source)) {
      problems.push(`Task has no method ${method}`);
    }
  }
  for (const [what, re] of TASK_ASSUMPTIONS) if (!re.test(source)) problems.push(`Task.ts no longer shows that ${what}`);
  return problems;
}

// ---- the build -----------------------------------------------------------------------------------------------

function gitDescribe(checkout) {
  try {
    const git = (...args) =>
      execFileSync("git", ["-C", checkout, ...args], { stdio: ["ignore", "pipe", "ignore"] })
        .toString()
        .trim();
    // Only the checkout's own repository: a folder inside another repository has no commit of its own.
    if (fs.realpathSync(git("rev-parse", "--show-toplevel")) !== fs.realpathSync(checkout)) return null;
    return git("rev-parse", "--short=10", "HEAD") || null;
  } catch {
    return null;
  }
}

/**
 * Bundles `checkout` for the adapter in `adapterDir`: writes build/agent.cjs and build/agent.json.
 * `esbuild` is the esbuild module (the caller resolves it from its own node_modules).
 */
export async function buildAgent({ esbuild, checkout, adapterDir, agent, commit, outDir, log = console.error }) {
  const packagesDir = packagesHome(adapterDir, outDir);
  checkout = path.resolve(checkout);
  if (!fileExists(path.join(checkout, "src", "package.json"))) {
    throw new Error(`${checkout}: not a ${agent} checkout (no src/package.json)`);
  }
  const missing = ["core/condense/index", "core/context-management/index", "core/task/validateToolResultIds", "core/task/Task"].filter(
    (rel) => !resolveSource(path.join(checkout, "src", rel)),
  );
  if (missing.length) throw new Error(`${checkout}: missing src/${missing.join(", src/")}`);
  const problems = checkTaskAssumptions(checkout);
  for (const p of problems) log(`warning: ${p}; check the op mapping in examples/targets/roo-family/adapter.cjs`);

  const dirs = moduleDirs(checkout, packagesDir);
  outDir = path.resolve(outDir || path.join(adapterDir, "build"));
  fs.mkdirSync(outDir, { recursive: true });
  const report = { real: new Set(), stubbed: new Set(), native: new Set() };
  const result = await esbuild.build({
    entryPoints: [path.join(HERE, "entry.mjs")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node18",
    outfile: path.join(outDir, "agent.cjs"),
    plugins: [agentPlugin({ checkout, packagesDir, dirs, report })],
    nodePaths: dirs.filter((d) => fs.existsSync(d)),
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
    logLevel: "silent",
    metafile: true,
    legalComments: "none",
  });
  const pkg = readJson(path.join(checkout, "src", "package.json")) || {};
  const meta = {
    agent,
    checkout,
    version: String(pkg.version || "0.0.0"),
    commit: commit || gitDescribe(checkout),
    real: [...report.real].sort(),
    stubbed: report.stubbed.size,
    native: [...report.native].sort(),
    warnings: problems,
  };
  fs.writeFileSync(path.join(outDir, "agent.json"), JSON.stringify(meta, null, 2) + "\n");
  const size = fs.statSync(path.join(outDir, "agent.cjs")).size;
  const shown = path.relative(process.cwd(), path.join(outDir, "agent.cjs"));
  log(
    `built ${shown.startsWith("..") ? path.join(outDir, "agent.cjs") : shown} (${Math.round(size / 1024)} kB) from ${agent} ` +
      `${meta.version}${meta.commit ? ` (${meta.commit})` : ""}: ${meta.real.length} modules as they are, ${meta.stubbed} stubbed` +
      (result.warnings.length ? `, ${result.warnings.length} esbuild warnings` : ""),
  );
  return meta;
}

/**
 * The command line of an agent's build.mjs: `node build.mjs CHECKOUT [--commit SHA] [--out DIR]`
 * (DIR defaults to the adapter's build/, and $CTXMODEL_AGENT_BUILD if set; with a DIR, npm's packages
 * go to DIR/node_modules and nothing is written into the adapter's folder; the target reads
 * $CTXMODEL_AGENT_BUILD).
 */
export async function main({ agent, adapterDir, esbuildVersion, argv = process.argv.slice(2) }) {
  const args = [...argv];
  const option = (flag) => {
    const at = args.indexOf(flag);
    if (at < 0) return null;
    const value = args[at + 1];
    args.splice(at, 2);
    return value;
  };
  const commit = option("--commit");
  const outDir = option("--out") || process.env.CTXMODEL_AGENT_BUILD || null;
  const checkout = args[0] || process.env.CTXMODEL_AGENT_CHECKOUT;
  if (!checkout || args.includes("-h") || args.includes("--help")) {
    const me = path.relative(process.cwd(), path.join(adapterDir, "build.mjs"));
    console.error(`usage: node ${me} PATH-TO-YOUR-${agent.toUpperCase()}-CHECKOUT [--commit SHA] [--out DIR]`);
    process.exit(checkout ? 0 : 2);
  }
  try {
    const packagesDir = packagesHome(adapterDir, outDir);
    const dirs = moduleDirs(path.resolve(checkout), packagesDir);
    ensurePackages(packagesDir, dirs.slice(0, -1), { esbuild: esbuildVersion, ...wantedPackages(path.resolve(checkout)) });
    const esbuild = loadEsbuild(dirs);
    await buildAgent({ esbuild, checkout, adapterDir, agent, commit, outDir });
  } catch (err) {
    console.error(`build failed: ${err && err.errors ? err.errors.map((e) => e.text).join("; ") : err && err.message}`);
    process.exit(1);
  }
}
