import { readStreamChunk, requestBody } from './openai-stream';

describe('readStreamChunk', () => {
  it('reads chat deltas, completion texts, usage, [DONE] and errors', () => {
    expect(readStreamChunk('{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}')).toEqual({ kind: 'chunk', text: '' });
    expect(readStreamChunk('{"choices":[{"index":0,"delta":{"content":"Hi"}}]}')).toEqual({ kind: 'chunk', text: 'Hi' });
    expect(readStreamChunk('{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}')).toEqual({ kind: 'chunk', text: 'hmm' });
    expect(readStreamChunk('{"choices":[{"index":0,"text":"abc","finish_reason":null}]}')).toEqual({ kind: 'chunk', text: 'abc' });
    expect(readStreamChunk('{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}')).toEqual({
      kind: 'chunk',
      text: '',
      usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
    });
    expect(readStreamChunk('{"choices":[{"delta":{"content":"x"}}],"usage":null}')).toEqual({ kind: 'chunk', text: 'x' });
    expect(readStreamChunk('[DONE]')).toEqual({ kind: 'done' });
    expect(readStreamChunk('{"error":{"message":"overloaded","code":503}}')).toEqual({ kind: 'error', message: 'overloaded' });
    expect(readStreamChunk('not json')).toEqual({ kind: 'error', message: 'not JSON: not json' });
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
});
