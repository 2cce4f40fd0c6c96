import { ResponseTracker } from '@duplex-bench/metrics';
import { duplexMetrics, RUN_FILES, vllmOmniFigures } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';
import { EndedSessions, sessionRow } from './ended-sessions';

/** A session with `n` responses, the server stating its own TTFP on every other one. */
function session(id: string, completed: boolean, n: number, first_ms: number): SessionResult {
  const t = new ResponseTracker({ output_sample_rate: 24000 }, 0);
  for (let k = 0; k < n; k++) {
    const at = 1 + k * 2;
    t.add({ kind: 'response_created', t_s: at, response_id: `r${k}` });
    t.add({ kind: 'text_delta', t_s: at + (first_ms - 5) / 1000, response_id: `r${k}`, chars: 2, tokens: 2 });
    t.add({ kind: 'audio_delta', t_s: at + (first_ms + k) / 1000, response_id: `r${k}`, bytes: 3840, duration_ms: 80 });
    t.add({ kind: 'audio_delta', t_s: at + (first_ms + k + 90) / 1000, response_id: `r${k}`, bytes: 3840, duration_ms: 80 });
    if (k % 2 === 0) t.add({ kind: 'server_metrics', t_s: at + 0.3, response_id: `r${k}`, ttfp_ms: first_ms / 2, measurement_origin: { ttfp: 'server request start to first audio' } });
    t.add({ kind: 'response_done', t_s: at + 0.5, response_id: `r${k}` });
  }
  return {
    id,
    completed,
    ...(completed ? {} : { reason: 'server_closed' as const }),
    violation: false,
    packets_sent: 100,
    late: 0,
    server_errors: 0,
    responses: t.done,
    response_metrics: t.metrics(),
  };
}

describe('EndedSessions', () => {
  const full = [session('a0', true, 3, 100), session('a1', true, 1, 140), session('a2', false, 2, 900), { ...session('a3', true, 0, 0), responses: undefined, response_metrics: undefined }];

  function ended(): { kept: EndedSessions; files: Map<string, string> } {
    const files = new Map<string, string>();
    const kept = new EndedSessions((file, text) => files.set(file, (files.get(file) ?? '') + text));
    for (const r of full) kept.add(r);
    return { kept, files };
  }

  it('writes each session as it ends: its row to sessions.jsonl, its responses to duplex_metrics.json, which parses once its tail is appended', () => {
    const { kept, files } = ended();
    const rows = (files.get(RUN_FILES.sessions) ?? '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as object);
    expect(rows).toEqual(full.map((r) => JSON.parse(JSON.stringify(sessionRow(r)))));
    const whole = duplexMetrics(full);
    const tail = kept.duplexTail(whole?.aggregate as NonNullable<typeof whole>['aggregate']);
    const file = JSON.parse(`${files.get(RUN_FILES.duplex_metrics)}${tail}`) as Record<string, unknown>;
    // The file a run of sessions started together writes, the same whatever the order of its keys.
    expect(file).toEqual(JSON.parse(JSON.stringify(whole?.file)));
  });

  it('keeps of each session only what the figures read, and they come out the same as from the whole records', () => {
    const { kept } = ended();
    expect(duplexMetrics(kept.results())?.aggregate).toEqual(duplexMetrics(full)?.aggregate);
    expect(vllmOmniFigures(kept.results())).toEqual(vllmOmniFigures(full));
    // The counts the summary reads come back as they were.
    expect(kept.results().map((r) => [r.id, r.completed, r.reason, r.packets_sent])).toEqual(full.map((r) => [r.id, r.completed, r.reason, r.packets_sent]));
  });

  it('gives back every kept field of thousands of sessions, across several chunks of its columns, the rare ones only where a session had them', () => {
    const many: SessionResult[] = Array.from({ length: 2500 }, (_, i) => ({
      ...session(`b${i}`, i % 7 !== 0, i % 3, 100 + (i % 50)),
      violation: i % 11 === 0,
      packets_sent: 180 + i,
      server_errors: i % 13 === 0 ? 2 : 0,
      ...(i % 13 === 0 ? { server_error_codes: { overloaded: 2 } } : {}),
      ...(i % 17 === 0 ? { dialect_events: { resync: i } } : {}),
      ...(i % 19 === 0 ? { responses: undefined, response_metrics: undefined } : {}),
    }));
    const kept = new EndedSessions(() => undefined);
    for (const r of many) kept.add(r);
    const fields = ['id', 'completed', 'reason', 'violation', 'packets_sent', 'server_errors', 'server_error_codes', 'dialect_events'] as const;
    const view = (r: SessionResult): unknown => [Object.fromEntries(fields.filter((f) => r[f] !== undefined).map((f) => [f, r[f]])), r.responses?.length ?? null, r.response_metrics?.stream_ttfp_ms ?? null];
    expect(kept.results().map(view)).toEqual(many.map(view));
    expect(vllmOmniFigures(kept.results())).toEqual(vllmOmniFigures(many));
  });

  it('writes no duplex_metrics.json when no session was answered', () => {
    const files = new Map<string, string>();
    const kept = new EndedSessions((file, text) => files.set(file, text));
    kept.add(full[3]);
    expect(files.has(RUN_FILES.duplex_metrics)).toBe(false);
    expect(kept.duplexTail({ measurement_origin: {} } as never)).toBeNull();
  });
});
