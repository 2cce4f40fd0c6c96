import { completeBody, DONE_EVENT, eventSizes, outputText, roleEvent, textEvent, usageEvent } from './sse-frames';

/** The JSON of one `data:` event, after checking its SSE framing. */
function dataOf(event: string): Record<string, unknown> {
  expect(event.startsWith('data: ')).toBe(true);
  expect(event.endsWith('\n\n')).toBe(true);
  return JSON.parse(event.slice('data: '.length, -2)) as Record<string, unknown>;
}

describe('SSE frames of the HTTP stubs', () => {
  it('carries text as delta.content in the chat form and as text in the completions form, with the finish reason or null', () => {
    expect(dataOf(textEvent('chat', 'stub-3', 'xx'))).toEqual({
      id: 'stub-3',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'stub',
      choices: [{ index: 0, delta: { content: 'xx' }, finish_reason: null }],
    });
    expect(dataOf(textEvent('completions', 'stub-3', 'x', 'length'))).toEqual({
      id: 'stub-3',
      object: 'text_completion',
      created: 0,
      model: 'stub',
      choices: [{ index: 0, text: 'x', finish_reason: 'length' }],
    });
  });

  it('quotes the text as JSON, so any characters survive the frame', () => {
    const text = 'a "quote", a \\ and a\nnewline';
    const chunk = dataOf(textEvent('chat', 'id', text)) as { choices: Array<{ delta: { content: string } }> };
    expect(chunk.choices[0].delta.content).toBe(text);
  });

  it('opens a chat stream with the assistant role and empty content, as vLLM does', () => {
    expect(dataOf(roleEvent('stub-1'))).toMatchObject({ id: 'stub-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  });

  it('ends with a usage chunk that has no choices and totals prompt and completion tokens, in the object of its endpoint', () => {
    expect(dataOf(usageEvent('chat', 'stub-1', 7, 30))).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 7, completion_tokens: 30, total_tokens: 37 } });
    expect(dataOf(usageEvent('completions', 'stub-1', 0, 5))).toMatchObject({ object: 'text_completion', choices: [], usage: { prompt_tokens: 0, completion_tokens: 5, total_tokens: 5 } });
    expect(DONE_EVENT).toBe('data: [DONE]\n\n');
  });

  it('builds a whole non-streamed response in either form, with usage unless told not to', () => {
    const chat = JSON.parse(completeBody('chat', 'stub-2', 'xxx', 4, 3)) as Record<string, unknown>;
    expect(chat).toEqual({
      id: 'stub-2',
      object: 'chat.completion',
      created: 0,
      model: 'stub',
      choices: [{ index: 0, message: { role: 'assistant', content: 'xxx' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
    const completion = JSON.parse(completeBody('completions', 'stub-2', 'xx', 1, 2, false)) as Record<string, unknown>;
    expect(completion).toEqual({ id: 'stub-2', object: 'text_completion', created: 0, model: 'stub', choices: [{ index: 0, text: 'xx', finish_reason: 'length' }] });
  });

  it('makes one character of output per token', () => {
    expect(outputText(5)).toHaveLength(5);
    expect(outputText(0)).toBe('');
  });

  it('splits the output into events of the interval, the last one shorter, losing no character', () => {
    expect(eventSizes(10, 3)).toEqual([3, 3, 3, 1]);
    expect(eventSizes(9, 3)).toEqual([3, 3, 3]);
    expect(eventSizes(2, 5)).toEqual([2]);
    expect(eventSizes(0, 4)).toEqual([]);
    expect(eventSizes(1000, 7).reduce((a, b) => a + b, 0)).toBe(1000);
  });
});
