import { decodeFrame } from '@duplex-bench/protocol';
import { countUnknownTypes } from './count-unknown';

const at = (type: string) => ({ frame: decodeFrame(JSON.stringify({ type })), raw: Buffer.alloc(0), received_s: 0 });

describe('countUnknownTypes', () => {
  it("counts by type what the session's current flow does not define, errors never", () => {
    const counts = new Map<string, number>();
    let known = new Set(['a']);
    const stage = countUnknownTypes(() => ({ isKnownType: (t: string) => known.has(t) }), counts);
    for (const t of ['a', 'b', 'b', 'error']) stage(at(t));
    // The flow is asked each time: a new attempt's flow counts by its own dialect.
    known = new Set(['a', 'b']);
    stage(at('b'));
    expect([...counts]).toEqual([['b', 2]]);
  });
});
