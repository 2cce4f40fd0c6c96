import type { ConversationOptions } from '@duplex-bench/run';

/** The conversation flags (CONVERSATION_FLAGS) as parsed, into options. */
export function conversationOptions(f: { conversation?: string; 'max-stop-s': number; 'takeover-min-ms': number }): ConversationOptions {
  return { conversation: f.conversation, max_stop_s: f['max-stop-s'], takeover_min_ms: f['takeover-min-ms'] };
}
