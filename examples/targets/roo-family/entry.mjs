// What the adapter takes from the agent's checkout (bundled by bundle.mjs; "@agent/" is <checkout>/src).
export { getEffectiveApiHistory, getMessagesSinceLastSummary } from "@agent/core/condense";
export { manageContext, truncateConversation } from "@agent/core/context-management";
export { validateAndFixToolResultIds } from "@agent/core/task/validateToolResultIds";
export { mergeConsecutiveApiMessages } from "@agent/core/task/mergeConsecutiveApiMessages";
export { maybeRemoveImageBlocks } from "@agent/api/transform/image-cleaning";
export { filterNonAnthropicBlocks } from "@agent/api/transform/anthropic-filter";
export { BaseProvider } from "@agent/api/providers/base-provider";
export { countTokens } from "@agent/utils/countTokens";
export { Task } from "@agent/core/task/Task";
