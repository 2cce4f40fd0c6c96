import { request } from 'undici';
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
  /** `text`: the output it carries ('' for a role-only or usage-only chunk; from the fast path only its presence); `usage` when the server sent it. */
  | { kind: 'chunk'; text: string; usage?: Usage };

interface Choice {
  text?: string;
  delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null };
}

/** Keys whose string value is output: completions' `text`, chat's `content`, reasoning models' `reasoning_content`/`reasoning`. */
const OUTPUT_KEYS = ['"content":', '"text":', '"reasoning_content":', '"reasoning":'];

/**
 * Whether a chunk carries output, read off the payload without parsing it: true, false, or null
 * when it cannot tell (then the payload is parsed whole). A key inside a JSON string value has its
 * quotes escaped, so a match is always a key of the object.
 */
function outputOf(data: string): boolean | null {
  let found = false;
  for (const key of OUTPUT_KEYS) {
    const at = data.indexOf(key);
    if (at < 0) continue;
    const value = data.charCodeAt(at + key.length);
    if (value === 34 /* " */) {
      if (data.charCodeAt(at + key.length + 1) !== 34) return true; // "" is no output
    } else if (value !== 110 /* n: null */) return null;
    found = true;
  }
  return found ? false : null;
}

/**
 * Reads one payload: `[DONE]`, an error object, or a chunk whose first choice carries `text`
 * (completions) or `delta.content` (chat; reasoning models' `reasoning_content`/`reasoning` count
 * as output too). The common chunk (output, no usage, no error) is read without JSON.parse: at
 * tens of thousands of events a second the parse was most of the client's CPU. `text` is then
 * the output's presence ('x' or ''), not its characters. A payload that is not JSON is an error
 * chunk, quoted up to 200 characters.
 */
export function readStreamChunk(data: string): StreamChunk {
  if (data === '[DONE]') return { kind: 'done' };
  if (!data.includes('"error"') && (!data.includes('"usage":') || data.includes('"usage":null'))) {
    const output = outputOf(data);
    if (output !== null) return output ? OUTPUT_CHUNK : EMPTY_CHUNK;
  }
  return parseStreamChunk(data);
}

const OUTPUT_CHUNK: StreamChunk = { kind: 'chunk', text: 'x' };
const EMPTY_CHUNK: StreamChunk = { kind: 'chunk', text: '' };

/** The whole-parse reading of a payload (errors, usage, shapes the fast path cannot tell). */
export function parseStreamChunk(data: string): StreamChunk {
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

/**
 * `requestBody` with everything but the prompt built once: the body is the template's two halves
 * around the quoted prompt (JSON.stringify of the whole body per request was 5 µs).
 */
export function requestBodyTemplate(o: RequestBodyOptions): (prompt: string) => string {
  const MARK = '\u0000prompt\u0000';
  const whole = requestBody(MARK, o);
  const quoted = JSON.stringify(MARK);
  const at = whole.indexOf(quoted);
  const head = whole.slice(0, at);
  const tail = whole.slice(at + quoted.length);
  return (prompt) => head + JSON.stringify(prompt) + tail;
}

/** The server's first model (`GET /v1/models`), or a one-line reason it cannot be had. */
export async function firstModel(url: string, headers: Record<string, string>): Promise<{ model: string } | { error: string }> {
  const at = `${url.replace(/\/$/, '')}/v1/models`;
  try {
    const res = await request(at, { headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { error: `${at} answered ${res.statusCode}; give --model` };
    const id = (JSON.parse(text) as { data?: Array<{ id?: unknown }> }).data?.[0]?.id;
    return typeof id === 'string' ? { model: id } : { error: `${at} lists no model; give --model` };
  } catch (err) {
    return { error: `cannot reach ${at}: ${(err as Error).message || (err as { code?: string }).code}` };
  }
}
