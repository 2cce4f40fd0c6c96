import { lastValueFrom, of, toArray } from 'rxjs';
import { sendCommits } from '@duplex-bench/transport';
import { afterSend } from './after-send';
import { countInputSent } from './count-input';
import { countPackets } from './count-packets';
import { markStreamStart } from './mark-stream-start';

const packet = (seq: number, late = false) => ({ seq, start_s: 10 + seq * 0.08, completed_s: 10.001 + seq * 0.08, late });

describe('the send path after each send, stage by stage', () => {
  it('marks the stream start at packet 0, counts the input sent, sends the commits that follow an append, and counts packets', async () => {
    const starts: number[] = [];
    const inputs: Array<[number, number, number]> = [];
    const sent = { bytes: 0 };
    const commits: string[] = [];
    const counts = { packets_sent: 0, late: 0, violation: false };
    const out = await lastValueFrom(
      of(packet(0), packet(1, true), packet(2)).pipe(
        afterSend<ReturnType<typeof packet>>(
          markStreamStart((s) => starts.push(s)),
          // 2,560 bytes per packet at 16 kHz: 80 ms each.
          countInputSent({ sample_rate: 16000, packetBytes: () => 2560 }, sent, (s, ms, c) => inputs.push([s, ms, c])),
          sendCommits({ afterAppend: (seq) => (seq === 1 ? ['commit'] : null) }, (f) => commits.push(f)),
          countPackets(counts),
        ),
        toArray(),
      ),
    );
    expect(out).toHaveLength(3);
    expect(starts).toEqual([10]);
    expect(sent.bytes).toBe(3 * 2560);
    expect(inputs.map(([, ms]) => ms)).toEqual([80, 160, 240]);
    expect(inputs[1][2]).toBeCloseTo(10.081, 9);
    expect(commits).toEqual(['commit']);
    expect(counts).toEqual({ packets_sent: 3, late: 1, violation: true });
  });
});
