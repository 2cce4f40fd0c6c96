import type { Family } from './families';
import { mockFamilies, type MockSource } from './mock-families';

type Counts = ReturnType<MockSource['counts']>;

const zero: Counts = { opened: 0, active: 0, completed: 0, accepted: 0, refused: 0, frames_sent: 0, socket_errors: 0 };

/** Each family's samples as `name{labels}` → value, read now. */
async function scrape(families: Family[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of families) {
    for (const v of (await f.get()).values) {
      const labels = Object.entries(v.labels).map(([k, x]) => `${k}=${x}`).join(',');
      out[labels ? `${f.name}{${labels}}` : f.name] = v.value;
    }
  }
  return out;
}

describe('mockFamilies', () => {
  it("serves each of the mock's counts under its own name, read at each scrape", async () => {
    let counts: Counts = { ...zero };
    let reads = 0;
    const families = mockFamilies({
      counts: () => {
        reads++;
        return counts;
      },
    });
    expect(reads).toBe(0);
    counts = { opened: 7, active: 3, completed: 4, accepted: 6, refused: 1, frames_sent: 900, socket_errors: 2 };
    expect(await scrape(families)).toEqual({
      duplex_bench_mock_sessions_opened_total: 7,
      duplex_bench_mock_sessions_active: 3,
      duplex_bench_mock_sessions_completed_total: 4,
      'duplex_bench_mock_admissions_total{outcome=accepted}': 6,
      'duplex_bench_mock_admissions_total{outcome=refused}': 1,
      duplex_bench_mock_frames_sent_total: 900,
      duplex_bench_mock_socket_errors_total: 2,
    });
    counts = { ...counts, active: 0, completed: 7 };
    const later = await scrape(families);
    expect([later.duplex_bench_mock_sessions_active, later.duplex_bench_mock_sessions_completed_total]).toEqual([0, 7]);
  });

  it('serves the open sessions as a gauge and everything else as counters', () => {
    const kinds = Object.fromEntries(mockFamilies({ counts: () => zero }).map((f) => [f.name, f.type]));
    expect(kinds.duplex_bench_mock_sessions_active).toBe('gauge');
    expect(Object.entries(kinds).filter(([name]) => name !== 'duplex_bench_mock_sessions_active').map(([, kind]) => kind)).toEqual(Array(5).fill('counter'));
  });

  it('serves the DCGM gauges of a GPU it does not have only when given one: memory and utilisation follow the active sessions', async () => {
    let counts: Counts = { ...zero, active: 3 };
    const gpu = { base_mib: 2000, mib_per_session: 1000, util_per_session: 40 };
    const families = mockFamilies({ counts: () => counts }, gpu);
    expect(await scrape(families)).toMatchObject({ 'DCGM_FI_DEV_FB_USED{gpu=0}': 5000, 'DCGM_FI_DEV_GPU_UTIL{gpu=0}': 100 });
    counts = { ...zero, active: 1 };
    expect(await scrape(families)).toMatchObject({ 'DCGM_FI_DEV_FB_USED{gpu=0}': 3000, 'DCGM_FI_DEV_GPU_UTIL{gpu=0}': 40 });
    expect(Object.keys(await scrape(mockFamilies({ counts: () => counts }))).filter((k) => k.startsWith('DCGM'))).toEqual([]);
  });
});

