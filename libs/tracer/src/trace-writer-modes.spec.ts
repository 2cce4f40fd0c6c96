import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceWriter } from './trace-writer';

/** The run directory's layout, as results names it. */
const LAYOUT = { sessions_dir: 'sessions', trace: 'trace.jsonl', receipts: 'input-send-receipts.json' };

const AUDIO = Buffer.alloc(2560).toString('base64');
const append = (seq: number) => `{"type":"input_audio_buffer.append","event_id":"s_a${seq}","audio":"${AUDIO}","sglang":{"seq":${seq},"t_start_ms":${seq * 80}}}`;
const receipt = (seq: number) => ({ event_id: `s_a${seq}`, seq, scheduled_s: seq * 0.08, start_s: seq * 0.08, completed_s: seq * 0.08 + 1e-4 });

describe('TraceWriter modes and back-pressure', () => {
  let root: string;
  let writer: TraceWriter | undefined;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tracer-modes-'));
  });
  afterEach(async () => {
    await writer?.close(5000);
    writer = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('--trace full writes every sent and received event, in order, as it went', async () => {
    writer = new TraceWriter({ layout: LAYOUT, root, mode: 'full' });
    await writer.started();
    const sink = writer.openSession('s');
    for (let seq = 0; seq < 20; seq++) {
      sink.sent(append(seq), seq * 0.08);
      sink.receipt(receipt(seq));
      sink.received(Buffer.from(`{"type":"sglang.input_audio.accepted","seq":${seq}}`), seq * 0.08 + 0.001);
    }
    await sink.close();
    const lines = (await readFile(join(root, 'sessions', 's', 'trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(40);
    expect(lines[0]).toEqual({ direction: 'send', time_s: 0, event: JSON.parse(append(0)) });
    expect(lines[39]).toMatchObject({ direction: 'receive', event: { type: 'sglang.input_audio.accepted', seq: 19 } });
  });

  it('--trace events keeps every event but writes audio as its byte length', async () => {
    writer = new TraceWriter({ layout: LAYOUT, root, mode: 'events' });
    await writer.started();
    const sink = writer.openSession('s');
    sink.sent(append(0), 0);
    sink.received(`{"type":"response.output_audio.delta","delta":"${Buffer.alloc(3528).toString('base64')}"}`, 0.01);
    await sink.close();
    const lines = (await readFile(join(root, 'sessions', 's', 'trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.event.audio ?? l.event.delta)).toEqual([2560, 3528]);
    expect(lines[0].event.sglang).toEqual({ seq: 0, t_start_ms: 0 });
  });

  it('counts each time it falls behind past the high-water mark, then emits drain once the worker catches up', async () => {
    writer = new TraceWriter({ layout: LAYOUT, root, mode: 'full', high_water_bytes: 10_000, delay_ms_per_batch: 100, flush_interval_ms: 50 });
    await writer.started();
    const sink = writer.openSession('s');
    const drained = once(writer, 'drain');
    for (let seq = 0; writer.stats().high_water_crossings === 0 && seq < 10_000; seq++) {
      sink.sent(append(seq), seq * 0.08);
      await new Promise((r) => setImmediate(r)); // let flush timers post batches
    }
    expect(writer.stats().high_water_crossings).toBe(1);
    await drained;
    expect(writer.stats().backlog_peak_bytes).toBeGreaterThan(10_000);
    await sink.close();
  });
});
