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

  it("decodes a response's deltas for its first voice only while it is wanted, at the rate a delta states", () => {
    const seen: ResponseEvent[] = [];
    const wanted = new Set(['r1']);
    const stage = trackResponses(() => true, (e) => seen.push(e), { wants: (id) => wanted.has(id), output_rate: () => 24000 });
    const tone = Buffer.alloc(24 * 80 * 2);
    for (let i = 24 * 40; i < 24 * 80; i++) tone.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
    const delta = (id: string, rate?: number) => at({ type: 'response.output_audio.delta', response_id: id, delta: tone.toString('base64'), ...(rate ? { sample_rate_hz: rate } : {}) }, 1);
    stage(delta('r1'));
    stage(delta('r1', 48000));
    stage(delta('r2'));
    expect(seen.map((e) => (e.kind === 'audio_delta' ? e.voiced_at_ms : 'other'))).toEqual([40, 20, undefined]);
  });
});
