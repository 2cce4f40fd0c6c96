/** OpenAI-compatible response bodies of the HTTP stubs: chunks as vLLM and OpenAI stream them. */
export type StubEndpoint = 'chat' | 'completions';

const MODEL = 'stub';

/** One `data:` event carrying `text`: the chat form (`delta.content`) or the completions form (`text`). */
export function textEvent(endpoint: StubEndpoint, id: string, text: string, finish: string | null = null): string {
  const quoted = JSON.stringify(text);
  const reason = finish === null ? 'null' : `"${finish}"`;
  return endpoint === 'chat'
    ? `data: {"id":"${id}","object":"chat.completion.chunk","created":0,"model":"${MODEL}","choices":[{"index":0,"delta":{"content":${quoted}},"finish_reason":${reason}}]}\n\n`
    : `data: {"id":"${id}","object":"text_completion","created":0,"model":"${MODEL}","choices":[{"index":0,"text":${quoted},"finish_reason":${reason}}]}\n\n`;
}

/** Chat streams open with the assistant's role and no content, as vLLM's do. */
export function roleEvent(id: string): string {
  return `data: {"id":"${id}","object":"chat.completion.chunk","created":0,"model":"${MODEL}","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`;
}

/** The last chunk when the client asked for usage (`stream_options.include_usage`): no choices, the counts. */
export function usageEvent(endpoint: StubEndpoint, id: string, prompt_tokens: number, completion_tokens: number): string {
  const object = endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  return `data: {"id":"${id}","object":"${object}","created":0,"model":"${MODEL}","choices":[],"usage":{"prompt_tokens":${prompt_tokens},"completion_tokens":${completion_tokens},"total_tokens":${prompt_tokens + completion_tokens}}}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';

/** A whole non-streamed response. */
export function completeBody(endpoint: StubEndpoint, id: string, text: string, prompt_tokens: number, completion_tokens: number, withUsage = true): string {
  const usage = { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
  const choice = endpoint === 'chat' ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' } : { index: 0, text, finish_reason: 'length' };
  return JSON.stringify({ id, object: endpoint === 'chat' ? 'chat.completion' : 'text_completion', created: 0, model: MODEL, choices: [choice], ...(withUsage ? { usage } : {}) });
}

/** `count` characters of output: one character is one token of the stubs. */
export function outputText(count: number): string {
  return 'x'.repeat(count);
}

/** Splits `length` characters into events of `interval` characters (the last one shorter). */
export function eventSizes(length: number, interval: number): number[] {
  const sizes: number[] = [];
  for (let at = 0; at < length; at += interval) sizes.push(Math.min(interval, length - at));
  return sizes;
}
