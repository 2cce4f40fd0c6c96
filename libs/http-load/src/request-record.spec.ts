import { newRecord } from './request-record';

describe('newRecord', () => {
  it('starts a request at its index and intended time, with every later instant unknown and nothing counted', () => {
    expect(newRecord(7, 12.5)).toEqual({
      index: 7,
      intended_s: 12.5,
      dispatched_s: null,
      started_s: null,
      first_byte_s: null,
      first_token_s: null,
      second_token_s: null,
      last_token_s: null,
      end_s: null,
      chunks: 0,
      tokens: 0,
      tokens_origin: 'chunks',
      prompt_tokens: null,
      status: null,
      error: null,
    });
  });

  it('gives each request a record of its own', () => {
    const a = newRecord(0, 1);
    const b = newRecord(0, 1);
    a.chunks++;
    expect(b.chunks).toBe(0);
    expect(a).not.toBe(b);
  });

  it('carries no message until an error sets one', () => {
    expect(newRecord(0, 0)).not.toHaveProperty('message');
  });
});
