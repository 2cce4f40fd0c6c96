import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuplexMetricsRows, duplexMetricsRow, writeDuplexMetrics } from './duplex-metrics-file';
import type { SessionResult } from './session-result';
import type { DuplexAggregate } from './summary';

const answered = (id: string, completed: boolean): SessionResult => ({ id, completed, ...(completed ? {} : { reason: 'server_closed' }), response_metrics: { ttfp_ms: 120 }, responses: [] }) as unknown as SessionResult;
const aggregate = { sessions: 2, measurement_origin: { sessions: 'complete sessions only' } } as unknown as DuplexAggregate;

describe('duplex_metrics.json', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'duplex-metrics-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("names each answered session's row by its id, its reason only when it has one", () => {
    expect(duplexMetricsRow(answered('s1', true))).toEqual({ session_id: 's1', completed: true, ttfp_ms: 120, responses: [] });
    expect(duplexMetricsRow(answered('s2', false))).toMatchObject({ session_id: 's2', completed: false, reason: 'server_closed' });
  });

  it('written a row at a time and closed by its tail, parses as the whole file would: rows first, then the aggregate', async () => {
    const rows = new DuplexMetricsRows();
    let text = '';
    for (const r of [answered('s1', true), { id: 's2', completed: true } as SessionResult, answered('s3', false)]) text += rows.add(r) ?? '';
    await writeFile(join(dir, 'duplex_metrics.json'), text);
    await rows.close(dir, aggregate);
    const file = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8')) as { duplex_session_metrics: Array<{ session_id: string }>; sessions: number };
    expect(file.duplex_session_metrics.map((r) => r.session_id)).toEqual(['s1', 's3']);
    expect(file.sessions).toBe(2);
  });

  it('adds no tail when no session was answered, so no file is made', async () => {
    const rows = new DuplexMetricsRows();
    expect(rows.add({ id: 's1', completed: true } as SessionResult)).toBeNull();
    expect(rows.tail(aggregate)).toBeNull();
    await rows.close(dir, aggregate);
    expect(await readdir(dir)).toEqual([]);
  });

  it('written whole, leaves no temporary file beside it', async () => {
    await writeDuplexMetrics(dir, { duplex_session_metrics: [] });
    expect(await readdir(dir)).toEqual(['duplex_metrics.json']);
    expect(JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'))).toEqual({ duplex_session_metrics: [] });
  });
});
