/** The two OpenAI-compatible streaming endpoints. */
export type HttpEndpoint = 'chat' | 'completions';

export const ENDPOINT_PATHS: Record<HttpEndpoint, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
};

/** Token counts the server reports (OpenAI `usage`). */
export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** What one `data:` payload of a streamed completion says. */
export type StreamChunk =
  | { kind: 'done' }
  | { kind: 'error'; message: string }
  /** `text`: the output it carries ('' for a role-only or usage-only chunk); `usage` when the server sent it. */
  | { kind: 'chunk'; text: string; usage?: Usage };

interface Choice {
  text?: string;
  delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null };
}

/**
 * Reads one payload: `[DONE]`, an error object, or a chunk whose first choice carries `text`
 * (completions) or `delta.content` (chat; reasoning models' `reasoning_content`/`reasoning` count
 * as output too). A payload that is not JSON is an error chunk, quoted up to 200 characters.
 */
export function readStreamChunk(data: string): StreamChunk {
  if (data === '[DONE]') return { kind: 'done' };
  let event: { choices?: Choice[]; usage?: Usage | null; error?: { message?: string } | string };
  try {
    event = JSON.parse(data) as typeof event;
  } catch {
    return { kind: 'error', message: `not JSON: ${data.slice(0, 200)}` };
  }
  if (event.error !== undefined) {
    return { kind: 'error', message: typeof event.error === 'string' ? event.error : (event.error.message ?? JSON.stringify(event.error).slice(0, 200)) };
  }
  const choice = event.choices?.[0];
  const text = choice ? (choice.text ?? choice.delta?.content ?? choice.delta?.reasoning_content ?? choice.delta?.reasoning ?? '') : '';
  return event.usage ? { kind: 'chunk', text, usage: event.usage } : { kind: 'chunk', text };
}

export interface RequestBodyOptions {
  endpoint: HttpEndpoint;
  model: string;
  max_tokens: number;
  stream: boolean;
  /** Ask the server to stop at max_tokens and not before (vLLM's `ignore_eos`), so output lengths are as asked. */
  ignore_eos: boolean;
}

/** The JSON body of one request: usage asked for in the stream, so token counts come from the server where it can. */
export function requestBody(prompt: string, o: RequestBodyOptions): string {
  const common = {
    model: o.model,
    max_tokens: o.max_tokens,
    stream: o.stream,
    ...(o.stream ? { stream_options: { include_usage: true } } : {}),
    ...(o.ignore_eos ? { ignore_eos: true } : {}),
  };
  return JSON.stringify(o.endpoint === 'chat' ? { ...common, messages: [{ role: 'user', content: prompt }] } : { ...common, prompt });
}
