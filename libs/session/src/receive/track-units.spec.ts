import { decodeFrame } from '@duplex-bench/protocol';
import { trackUnits } from './track-units';

const at = (event: Record<string, unknown>, received_s: number) => ({ frame: decodeFrame(JSON.stringify(event)), raw: Buffer.alloc(0), received_s });

describe('trackUnits', () => {
  it('hands the receive time of each sglang.unit.done, and nothing else', () => {
    const seen: number[] = [];
    const stage = trackUnits((t) => seen.push(t));
    stage(at({ type: 'sglang.unit.done', unit_id: 'unit_0' }, 1.5));
    stage(at({ type: 'sglang.input_audio.accepted', seq: 0 }, 1.6));
    expect(seen).toEqual([1.5]);
  });
});
