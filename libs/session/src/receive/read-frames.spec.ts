import { lastValueFrom, of, toArray } from 'rxjs';
import { decodeFrame, type ProtocolError, type ResponseEvent } from '@duplex-bench/protocol';
import type { ReceivedEvent } from '@duplex-bench/transport';
import { countUnknownTypes } from './count-unknown';
import { readFrames } from './read-frames';
import { trackResponses } from './track-responses';
import { trackUnits } from './track-units';
import { watchServerErrors } from './watch-server-errors';

const received = (event: Record<string, unknown>, received_s: number): ReceivedEvent => {
  const text = JSON.stringify(event);
  return { frame: decodeFrame(text), raw: Buffer.from(text), received_s };
};

const frames = [
  received({ type: 'response.created', response: { id: 'r' } }, 1),
  received({ type: 'sglang.unit.done', unit_id: 'unit_0', sglang: {} }, 2),
  received({ type: 'error', error: { code: 'bad', message: 'no' } }, 3),
  received({ type: 'something.new' }, 4),
];

describe('the receive path, stage by stage', () => {
  it('reads response events only once the figures have started, and passes every frame on', async () => {
    const seen: ResponseEvent[] = [];
    let started = false;
    const out = await lastValueFrom(of(...frames).pipe(readFrames(trackResponses(() => started, (e) => seen.push(e))), toArray()));
    expect(out).toHaveLength(4);
    expect(seen).toEqual([]);
    started = true;
    await lastValueFrom(of(...frames).pipe(readFrames(trackResponses(() => started, (e) => seen.push(e))), toArray()));
    expect(seen).toEqual([{ kind: 'response_created', t_s: 1, response_id: 'r' }]);
  });

  it('hands unit receipts and server errors on, and counts the types the dialect does not define, errors apart', async () => {
    const units: number[] = [];
    const errors: ProtocolError[] = [];
    const unknown = new Map<string, number>();
    const known = new Set(['response.created', 'sglang.unit.done']);
    await lastValueFrom(
      of(...frames).pipe(
        readFrames(
          trackUnits((t) => units.push(t)),
          watchServerErrors((e) => errors.push(e)),
          countUnknownTypes(() => ({ isKnownType: (t: string) => known.has(t) }), unknown),
        ),
        toArray(),
      ),
    );
    expect(units).toEqual([2]);
    expect(errors.map((e) => e.info.server_code)).toEqual(['bad']);
    expect([...unknown]).toEqual([['something.new', 1]]);
  });
});
