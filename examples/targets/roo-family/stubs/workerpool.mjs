// workerpool: no pool, so countTokens falls back to counting in process (the same function the
// worker runs: src/workers/countTokens.ts calls tiktoken too).
export function pool() {
  return null;
}
export default { pool };
