import { parseStreamChunk, readStreamChunk, requestBody, requestBodyTemplate } from './openai-stream';

const PAYLOADS = [
  '{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
  '{"choices":[{"index":0,"delta":{"role":"assistant"}}]}',
  '{"choices":[{"index":0,"delta":{"content":"Hi"}}]}',
  '{"choices":[{"index":0,"delta":{"content":"say \\"content\\":\\"\\" twice"}}]}',
  '{"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"hmm"}}]}',
  '{"choices":[{"index":0,"delta":{"reasoning":"hmm"}}]}',
  '{"choices":[{"index":0,"delta":{"content":null}}]}',
  '{"choices":[{"index":0,"text":"abc","finish_reason":null}]}',
  '{"choices":[{"index":0,"text":"","finish_reason":"length"}]}',
  '{"choices":[{"delta":{"content":"x"}}],"usage":null}',
  '{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}',
  '{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}',
  '{"choices":[{"delta":{"content":["a"]}}]}',
  '{"error":{"message":"overloaded","code":503}}',
  '{"error":"plain"}',
  '[DONE]',
  'not json',
];

describe('readStreamChunk', () => {
  it('reads chat deltas, completion texts, usage, [DONE] and errors (whole parse)', () => {
    expect(parseStreamChunk(PAYLOADS[0])).toEqual({ kind: 'chunk', text: '' });
    expect(parseStreamChunk(PAYLOADS[2])).toEqual({ kind: 'chunk', text: 'Hi' });
    expect(parseStreamChunk(PAYLOADS[4])).toEqual({ kind: 'chunk', text: 'hmm' });
    expect(parseStreamChunk(PAYLOADS[7])).toEqual({ kind: 'chunk', text: 'abc' });
    expect(parseStreamChunk(PAYLOADS[10])).toEqual({ kind: 'chunk', text: '', usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } });
    expect(parseStreamChunk('[DONE]')).toEqual({ kind: 'done' });
    expect(parseStreamChunk(PAYLOADS[13])).toEqual({ kind: 'error', message: 'overloaded' });
    expect(parseStreamChunk('not json')).toEqual({ kind: 'error', message: 'not JSON: not json' });
  });

  it.each(PAYLOADS)('the fast reading agrees with the whole parse on output, usage and errors: %s', (data) => {
    const fast = readStreamChunk(data);
    const whole = parseStreamChunk(data);
    expect(fast.kind).toBe(whole.kind);
    if (fast.kind === 'chunk' && whole.kind === 'chunk') {
      expect(fast.text.length > 0).toBe(whole.text.length > 0);
      expect(fast.usage).toEqual(whole.usage);
    } else expect(fast).toEqual(whole);
  });
});

describe('requestBody', () => {
  it('builds the chat and completions bodies, asking for usage in the stream', () => {
    const o = { model: 'm', max_tokens: 16, stream: true, ignore_eos: true };
    expect(JSON.parse(requestBody('hello', { ...o, endpoint: 'chat' }))).toEqual({
      model: 'm',
      max_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(JSON.parse(requestBody('hello', { ...o, endpoint: 'completions', stream: false, ignore_eos: false }))).toEqual({ model: 'm', max_tokens: 16, stream: false, prompt: 'hello' });
  });

  it('builds the same bodies from a template', () => {
    for (const endpoint of ['chat', 'completions'] as const) {
      for (const stream of [true, false]) {
        const o = { endpoint, model: 'm "quoted"', max_tokens: 16, stream, ignore_eos: stream };
        const body = requestBodyTemplate(o);
        for (const prompt of ['hello', 'a "quote" and \\ backslash\n', '']) expect(body(prompt)).toBe(requestBody(prompt, o));
      }
    }
  });
});
