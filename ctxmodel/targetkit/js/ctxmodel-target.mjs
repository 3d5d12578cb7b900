// ctxmodel target kit, ES module entry point: the same kit as ctxmodel-target.cjs (one source).
//
//   import { serve } from "./ctxmodel-target.mjs"
//   serve({ name: "my-agent", version: "1.0.0", tokenizer: "o200k_base", policies: {...}, ops: {...} })
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const kit = require("./ctxmodel-target.cjs");

export const {
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
} = kit;
export default kit;
