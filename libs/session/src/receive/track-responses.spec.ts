import { decodeFrame, type ResponseEvent } from '@duplex-bench/protocol';
import { trackResponses } from './track-responses';

const at = (event: Record<string, unknown>, received_s: number) => ({ frame: decodeFrame(JSON.stringify(event)), raw: Buffer.alloc(0), received_s });

describe('trackResponses', () => {
  it('reads what a frame says of the responses only once the figures started, at its receive time', () => {
    const seen: ResponseEvent[] = [];
    let started = false;
    const stage = trackResponses(() => started, (e) => seen.push(e));
    stage(at({ type: 'response.created', response: { id: 'r0' } }, 1));
    started = true;
    stage(at({ type: 'response.created', response: { id: 'r1' } }, 2));
    stage(at({ type: 'response.done', response: { id: 'r1', status: 'completed' } }, 3));
    expect(seen.map((e) => [e.kind, e.t_s])).toEqual([['response_created', 2], ['response_done', 3]]);
  });
});
