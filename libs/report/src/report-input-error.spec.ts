import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSamples, PacingRecorder, SampleStore } from '@duplex-bench/metrics';
import { loadReport } from './report-data';
import { ReportInputError } from './report-input-error';

describe('ReportInputError', () => {
  it('is an Error that carries its code and names itself', () => {
    const err = new ReportInputError('NO_SAMPLES', '/runs/a: no samples.msgpack');
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'ReportInputError', code: 'NO_SAMPLES', message: '/runs/a: no samples.msgpack' });
    expect(String(err)).toBe('ReportInputError: /runs/a: no samples.msgpack');
  });
});

describe('the codes, as the report meets each case', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'report-input-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const summary = { qualified: true, interrupted: false, packet_ms: 80, packets: { sent: 1, late: 0 }, sessions: { started: 1, completed: 1, incomplete: 0, with_violation: 0, incomplete_reasons: {} } };
  async function samples(): Promise<void> {
    const store = new SampleStore(80);
    store.open('s0').push({ seq: 0, scheduled_s: 1, start_s: 1, completed_s: 1, send_ms: 0.1, buffered_bytes: 0 });
    await writeFile(join(dir, 'samples.msgpack'), encodeSamples(store.toFile(new PacingRecorder(80))));
  }
  const rejection = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

  it('NOT_A_RUN: a directory without summary.json, named in the message', async () => {
    const err = await rejection(loadReport(dir));
    expect(err).toBeInstanceOf(ReportInputError);
    expect(err).toMatchObject({ code: 'NOT_A_RUN', message: expect.stringContaining(dir) });
  });

  it('NO_SAMPLES: a summary with no samples.msgpack, no process directories and no merged sources', async () => {
    await writeFile(join(dir, 'summary.json'), JSON.stringify(summary));
    expect(await rejection(loadReport(dir))).toMatchObject({ name: 'ReportInputError', code: 'NO_SAMPLES' });
  });

  it('BAD_RUN_FILE: a file of the run that is there but cannot be read, by its path', async () => {
    await writeFile(join(dir, 'summary.json'), '{"qualified": tru');
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringContaining(join(dir, 'summary.json')) });
    await writeFile(join(dir, 'summary.json'), JSON.stringify(summary));
    await writeFile(join(dir, 'samples.msgpack'), Buffer.from([0xc1, 0xc1, 0xc1]));
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringContaining('samples.msgpack') });
  });

  it("names each run file cut short, with the parser's place: summary.json, run.json, timeline.json, samples.msgpack, a line of sessions.jsonl", async () => {
    const cut = (path: string) => new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`);
    await writeFile(join(dir, 'summary.json'), '{"qualified": tru');
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(cut(join(dir, 'summary.json'))) });
    await writeFile(join(dir, 'summary.json'), JSON.stringify(summary));
    await writeFile(join(dir, 'run.json'), '{"command": ["duplex-bench", "ru');
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(cut(join(dir, 'run.json'))) });
    await writeFile(join(dir, 'run.json'), '{}');
    await writeFile(join(dir, 'samples.msgpack'), Buffer.from([0xc1, 0xc1, 0xc1]));
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(new RegExp(`^${join(dir, 'samples.msgpack')}: not valid msgpack \\(.+\\); the file may be cut short$`)) });
    await samples();
    await writeFile(join(dir, 'timeline.json'), '{"samples": [');
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(cut(join(dir, 'timeline.json'))) });
    await rm(join(dir, 'timeline.json'));
    await writeFile(join(dir, 'sessions.jsonl'), '{"id":"s0","completed":true,"packets_sent":1,"late":0}\n{"id":"s1","compl');
    expect(await rejection(loadReport(dir))).toMatchObject({ message: expect.stringMatching(new RegExp(`^${join(dir, 'sessions.jsonl')}: line 2: not valid JSON \\(.+\\); the file may be cut short$`)) });
  });

  it("names a recording's sample record cut short", async () => {
    await writeFile(join(dir, 'summary.json'), JSON.stringify(summary));
    await samples();
    await mkdir(join(dir, 'samples'));
    await writeFile(join(dir, 'samples', 'q-001.json'), '{"sample_id":"q-001","completed":tr');
    expect(await rejection(loadReport(dir))).toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(new RegExp(`^${join(dir, 'samples', 'q-001.json')}: not valid JSON \\(.+\\); the file may be cut short$`)) });
  });

  it('NO_MOCK_STATS: a --mock-stats file that does not exist', async () => {
    await writeFile(join(dir, 'summary.json'), JSON.stringify(summary));
    await samples();
    const missing = join(dir, 'mock-stats.json');
    expect(await rejection(loadReport(dir, { mock_stats: missing }))).toMatchObject({ code: 'NO_MOCK_STATS', message: `--mock-stats ${missing}: no such file` });
    await writeFile(missing, JSON.stringify({ arrival_deviation_ms: { p99: 1.5 } }));
    expect((await loadReport(dir, { mock_stats: missing })).server_view).toMatchObject({ source: missing, arrival_deviation_ms: { p99: 1.5 } });
  });
});
