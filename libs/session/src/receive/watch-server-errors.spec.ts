import { decodeFrame, type ProtocolError } from '@duplex-bench/protocol';
import { watchServerErrors } from './watch-server-errors';

const at = (event: Record<string, unknown>) => ({ frame: decodeFrame(JSON.stringify(event)), raw: Buffer.alloc(0), received_s: 0 });

describe('watchServerErrors', () => {
  it('reads each error event into a ProtocolError with its code and fatality, and passes other frames by', () => {
    const seen: ProtocolError[] = [];
    const stage = watchServerErrors((e) => seen.push(e));
    stage(at({ type: 'error', error: { code: 'engine_failed', message: 'boom' }, sglang: { fatal: true } }));
    stage(at({ type: 'response.done', response: { id: 'r' } }));
    expect(seen.map((e) => [e.info.server_code, e.info.fatal])).toEqual([['engine_failed', true]]);
  });
});
