/** `--conversation` and the bounds its figures are read with, as `run` and `record` take them. */
export interface ConversationOptions {
  /** `--conversation`: a built-in script's name or a script file. */
  conversation?: string;
  max_stop_s: number;
  takeover_min_ms: number;
}

/** The conversation flags (CONVERSATION_FLAGS) as parsed, into options. */
export function conversationOptions(f: { conversation?: string; 'max-stop-s': number; 'takeover-min-ms': number }): ConversationOptions {
  return { conversation: f.conversation, max_stop_s: f['max-stop-s'], takeover_min_ms: f['takeover-min-ms'] };
}
