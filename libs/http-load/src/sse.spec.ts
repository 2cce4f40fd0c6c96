import { SseParser } from './sse';

function parseAll(chunks: Buffer[]): string[] {
  const out: string[] = [];
  const p = new SseParser((d) => out.push(d));
  for (const c of chunks) p.push(c);
  return out;
}

/** Every way of cutting `bytes` in two. */
function everySplit(bytes: Buffer): Buffer[][] {
  return Array.from({ length: bytes.length + 1 }, (_, i) => [bytes.subarray(0, i), bytes.subarray(i)]);
}

describe('SseParser', () => {
  const stream = 'data: {"a":1}\n\n: a comment\nevent: message\nid: 7\ndata: {"b":"é€😀"}\n\ndata: [DONE]\n\n';

  it('hands over each data payload when its event ends, skipping comments and other fields', () => {
    expect(parseAll([Buffer.from(stream)])).toEqual(['{"a":1}', '{"b":"é€😀"}', '[DONE]']);
  });

  it('gives the same events however the bytes are split, a multi-byte character included', () => {
    const bytes = Buffer.from(stream);
    for (const parts of everySplit(bytes)) expect(parseAll(parts)).toEqual(['{"a":1}', '{"b":"é€😀"}', '[DONE]']);
    // One byte at a time.
    expect(parseAll([...bytes].map((b) => Buffer.from([b])))).toEqual(['{"a":1}', '{"b":"é€😀"}', '[DONE]']);
  });

  it('reads CRLF and CR line ends, split between reads too', () => {
    const crlf = Buffer.from('data: x\r\n\r\ndata: y\r\rdata:z\n\n');
    for (const parts of everySplit(crlf)) expect(parseAll(parts)).toEqual(['x', 'y', 'z']);
    // A CRLF split between reads is one line end, not two (two would end the event early).
    const twoLines = Buffer.from('data: a\r\ndata: b\r\n\r\n');
    for (const parts of everySplit(twoLines)) expect(parseAll(parts)).toEqual(['a\nb']);
  });

  it('joins the data lines of one event with newlines; an event without data is nothing', () => {
    expect(parseAll([Buffer.from('data: one\ndata: two\n\nevent: ping\n\ndata\n\n')])).toEqual(['one\ntwo', '']);
  });

  it('holds an event that has not ended yet', () => {
    const out: string[] = [];
    const p = new SseParser((d) => out.push(d));
    p.push(Buffer.from('data: {"partial":'));
    expect(out).toEqual([]);
    expect(p.buffered).toBeGreaterThan(0);
    p.push(Buffer.from('true}\n'));
    expect(out).toEqual([]);
    p.push(Buffer.from('\n'));
    expect(out).toEqual(['{"partial":true}']);
  });
});
