import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHistogram, SampleStore } from '@duplex-bench/metrics';
import { sessionFile } from '@duplex-bench/results';
import { keptPacing, writeAttemptPacing } from './attempt-pacing';
import type { SampleResult } from './sample-results';

/** A store holding `n` packets of session `id`, each sent `late_ms` after its slot. */
function store(id: string, n: number, late_ms: number, s = new SampleStore(80)): SampleStore {
  const column = s.open(id);
  for (let seq = 0; seq < n; seq++) {
    const scheduled_s = 10 + seq * 0.08;
    // Packet 0 sets the origin: the others' deviation is late_ms each.
    const start_s = scheduled_s + (seq === 0 ? 0 : late_ms / 1000);
    column.push({ seq, scheduled_s, start_s, completed_s: start_s + 0.001, send_ms: 0.5, buffered_bytes: 0 });
  }
  column.end();
  return s;
}

const record = (sample_id: string, pacing_file?: string): SampleResult => ({
  sample_id,
  subset: 's',
  variant: 'v',
  duration_s: 1,
  completed: true,
  violation: false,
  packets_sent: 3,
  late: 0,
  server_errors: 0,
  ...(pacing_file ? { pacing_file } : {}),
});

describe('attempt pacing', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'attempt-pacing-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("writes an attempt's packets under the session's directory and names the file relative to the recording", async () => {
    const path = await writeAttemptPacing(dir, 'q-001', store('q-001', 5, 2), 80);
    expect(path).toBe(sessionFile('', 'q-001', 'pacing'));
    const { file, missing } = await keptPacing(dir, [record('q-001', path as string)], 80);
    expect(missing).toBe(0);
    expect(file.packet_ms).toBe(80);
    expect(file.sessions).toHaveLength(1);
    const s = file.sessions[0];
    expect(s.id).toBe('q-001');
    expect([...s.seq]).toEqual([0, 1, 2, 3, 4]);
    expect([...s.deviation_ms].map((v) => Math.round(v * 1000) / 1000)).toEqual([0, 2, 2, 2, 2]);
  });

  it('writes nothing for a sample that was never opened, or that sent no packet', async () => {
    expect(await writeAttemptPacing(dir, 'absent', new SampleStore(80), 80)).toBeNull();
    expect(await writeAttemptPacing(dir, 'silent', store('silent', 0, 0), 80)).toBeNull();
  });

  it("pools the kept records' packets under their sample ids, with histograms of all of them, and counts the records with no packet file", async () => {
    const both = store('b', 4, 10, store('a', 3, 1));
    const a = await writeAttemptPacing(dir, 'a', both, 80);
    const b = await writeAttemptPacing(dir, 'b', both, 80);
    // An earlier attempt's packets, under a name of its own, count under the sample they belong to.
    const { file, missing } = await keptPacing(dir, [record('a', a as string), record('none'), record('b2', b as string), record('none2')], 80);
    expect(missing).toBe(2);
    expect(file.sessions.map((s) => [s.id, s.seq.length])).toEqual([
      ['a', 3],
      ['b2', 4],
    ]);
    // The pooled deviation histogram holds the 7 packets, the largest 10 ms late.
    const deviation = decodeHistogram(file.histograms.deviation);
    expect(deviation.totalCount).toBe(7);
    expect(deviation.maxValue / 1000).toBeCloseTo(10, 1);
  });

  it('fails on a packet file that is not one, naming it', async () => {
    await writeFile(join(dir, 'bad.msgpack'), Buffer.from([0xc1]));
    const err = await keptPacing(dir, [record('x', 'bad.msgpack')], 80).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${join(dir, 'bad.msgpack')}: not valid msgpack \\(.+\\); the file may be cut short$`));
  });

  it('names a packet file cut short', async () => {
    const path = await writeAttemptPacing(dir, 'q-001', store('q-001', 5, 2), 80);
    const full = join(dir, path as string);
    const bytes = await readFile(full);
    await writeFile(full, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const err = await keptPacing(dir, [record('q-001', path as string)], 80).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${full}: not valid msgpack \\(.+\\); the file may be cut short$`));
  });
});
