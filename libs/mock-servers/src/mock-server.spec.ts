import { nodeTimerHost } from '@duplex-bench/pacer';
import { VirtualTime } from '@duplex-bench/pacer/testing';
import WebSocket from 'ws';
import { nativeAppend, nativeInputEnd, nativeSessionClose, nativeSessionUpdate } from '@duplex-bench/protocol';
import { packets, scriptedInput } from './behaviour.spec-helpers';
import type { BehaviourEvent } from './behaviour-log';
import { startMockServer, type MockServerOptions, type MockServer } from './mock-server';
import { startFaultyMock, type MockFault } from './testing';

const BOUND_MS = 3000;
/** 3,528 bytes: 80 ms of 22,050 Hz PCM16, the output of one 80 ms unit. */
const OUTPUT_UNIT_BYTES = 3528;

type Event = Record<string, unknown> & { type?: string };

/** A bare `ws` client that keeps every frame it receives, in order. */
class RawClient {
  /** Frames as text, as they arrived. */
  readonly texts: string[] = [];
  /** The same frames parsed; a frame that is not JSON is `{ unparsed: text }`. */
  readonly events: Event[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private checks = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const text = data.toString();
      this.texts.push(text);
      let event: Event;
      try {
        event = JSON.parse(text) as Event;
      } catch {
        event = { unparsed: text };
      }
      this.events.push(event);
      for (const check of [...this.checks]) check();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })));
  }

  static connect(url: string, clients: RawClient[]): Promise<RawClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const client = new RawClient(ws);
    clients.push(client);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }

  send(frame: string | Buffer): void {
    this.ws.send(frame, { binary: false });
  }

  types(): Array<string | undefined> {
    return this.events.map((e) => e.type);
  }

  /** Resolves once `done(events)` holds; rejects after `ms` or when the socket closes first. */
  waitFor(what: string, done: (events: Event[]) => boolean, ms = BOUND_MS): Promise<void> {
    if (done(this.events)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const finish = (err?: Error) => {
        clearTimeout(timer);
        this.checks.delete(check);
        this.ws.off('close', onClose);
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (done(this.events)) finish();
      };
      const onClose = () => finish(new Error(`socket closed while waiting for ${what}; got ${JSON.stringify(this.types())}`));
      const timer = setTimeout(() => finish(new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(this.types())}`)), ms);
      this.checks.add(check);
      this.ws.on('close', onClose);
    });
  }

  waitForType(type: string, count = 1): Promise<void> {
    return this.waitFor(`${count} × ${type}`, (events) => events.filter((e) => e.type === type).length >= count);
  }

  /**
   * Ping, then wait for the pong. The server handles frames in order and answers a ping only after
   * the handlers of every earlier frame ran, so whatever it sent for them has arrived by then.
   */
  barrier(ms = BOUND_MS): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no pong within ${ms} ms`)), ms);
      this.ws.once('pong', () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.ping();
    });
  }
}

const audioOf = (bytes: number) => Buffer.from(Buffer.alloc(bytes).toString('base64'));
const append = (seq: number, bytes = 2560) => nativeAppend(`a${seq}`, seq, seq * 80, audioOf(bytes));

/** HTTP status of a refused upgrade. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no answer to the upgrade within ${BOUND_MS} ms`));
    }, BOUND_MS);
    ws.once('open', () => {
      clearTimeout(timer);
      ws.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      const status = /Unexpected server response: (\d+)/.exec(err.message);
      if (status) resolve(Number(status[1]));
      else reject(err);
    });
  });
}

describe('append-echo mock', () => {
  let mock: MockServer | undefined;
  let clients: RawClient[] = [];

  async function start(options: MockServerOptions = {}, fault?: MockFault): Promise<MockServer> {
    mock = fault ? await startFaultyMock(fault, { port: 0, ...options }) : await startMockServer({ port: 0, ...options });
    return mock;
  }

  async function connect(): Promise<RawClient> {
    const client = await RawClient.connect((mock as MockServer).url, clients);
    await client.waitForType('session.created');
    return client;
  }

  afterEach(async () => {
    for (const client of clients) client.ws.terminate();
    await Promise.all(clients.map((c) => c.closed));
    clients = [];
    await mock?.close();
    mock = undefined;
  });

  it('listens on 127.0.0.1 at the realtime path, on a free port', async () => {
    const m = await start();
    expect(m.port).toBeGreaterThan(0);
    expect(m.url).toBe(`ws://127.0.0.1:${m.port}/v1/realtime`);
    expect(await upgradeStatus(m.url.replace('/v1/realtime', '/elsewhere'))).toBe(404);
  });

  it('grants the session on session.update', async () => {
    await start();
    const client = await connect();
    client.send(nativeSessionUpdate('u1'));
    await client.waitForType('session.updated');
    const updated = client.events[1] as { session: { sglang: { granted: Record<string, unknown> } } };
    expect(updated.session.sglang.granted).toMatchObject({ native_unit_ms: 80, tail_policy: 'pad' });
  });

  it('acks each append and answers it with an audio delta, a text delta and sglang.unit.done by default', async () => {
    await start();
    const client = await connect();
    client.send(append(0));
    client.send(append(1));
    await client.waitForType('sglang.unit.done', 2);
    expect(client.types()).toEqual([
      'session.created',
      'sglang.input_audio.accepted',
      'response.created',
      'response.output_audio.delta',
      'response.output_audio_transcript.delta',
      'sglang.unit.done',
      'sglang.input_audio.accepted',
      'response.output_audio.delta',
      'response.output_audio_transcript.delta',
      'sglang.unit.done',
    ]);
    expect(client.events[1]).toEqual({ type: 'sglang.input_audio.accepted', event_id: 'mock_0_e1', seq: 0, accepted_end_ms: 80, client_event_id: 'a0' });
    expect(client.events[6]).toEqual({ type: 'sglang.input_audio.accepted', event_id: 'mock_0_e6', seq: 1, accepted_end_ms: 160, client_event_id: 'a1' });
    expect(client.events[7]).toMatchObject({
      response_id: 'resp_0',
      item_id: 'item_resp_0',
      output_index: 0,
      content_index: 0,
      sglang: { unit_id: 'unit_1', chunk_seq: 0, media_time: { t_start_ms: 80, duration_ms: 80 } },
    });
    expect(Buffer.from(client.events[7].delta as string, 'base64')).toHaveLength(OUTPUT_UNIT_BYTES);
    expect(client.events[9]).toEqual({
      type: 'sglang.unit.done',
      event_id: 'mock_0_e9',
      unit_id: 'unit_1',
      sglang: { unit_id: 'unit_1', chunk_seq: 0, media_time: { t_start_ms: 80, duration_ms: 80 } },
    });
    // Every server event has its own id.
    expect(new Set(client.events.map((e) => e.event_id)).size).toBe(client.events.length);
  });

  it('answers each append with an audio delta and sglang.unit.done when replies_per_append is 2, and refuses fewer', async () => {
    await start({ replies_per_append: 2 });
    const client = await connect();
    client.send(append(0));
    client.send(append(1));
    await client.barrier();
    expect(client.types()).toEqual([
      'session.created',
      'sglang.input_audio.accepted',
      'response.created',
      'response.output_audio.delta',
      'sglang.unit.done',
      'sglang.input_audio.accepted',
      'response.output_audio.delta',
      'sglang.unit.done',
    ]);
    await expect(startMockServer({ port: 0, replies_per_append: 1 })).rejects.toThrow(RangeError);
  });

  it('answers each append with an audio delta, three transcript deltas and sglang.unit.done when replies_per_append is 5', async () => {
    await start({ replies_per_append: 5 });
    const client = await connect();
    client.send(append(0));
    client.send(append(1));
    await client.barrier();
    const perAppend = ['response.output_audio.delta', ...Array(3).fill('response.output_audio_transcript.delta'), 'sglang.unit.done'];
    expect(client.types()).toEqual([
      'session.created',
      'sglang.input_audio.accepted',
      'response.created',
      ...perAppend,
      'sglang.input_audio.accepted',
      ...perAppend,
    ]);
  });

  it('ends input whose last packet is short in the dialect order: the tail unit holds the remainder and yields a whole unit of output', async () => {
    await start();
    const client = await connect();
    client.send(append(0));
    client.send(append(1));
    client.send(append(2, 640));
    client.send(nativeInputEnd('end_1'));
    await client.waitForType('sglang.input_audio.drained');
    const types = client.types();
    const ended = types.indexOf('sglang.input_audio.ended');
    const lastAudio = types.lastIndexOf('response.output_audio.delta');
    const lastUnitDone = types.lastIndexOf('sglang.unit.done');
    const audioDone = types.indexOf('response.output_audio.done');
    const responseDone = types.indexOf('response.done');
    const drained = types.indexOf('sglang.input_audio.drained');
    const order = [ended, lastAudio, lastUnitDone, audioDone, responseDone, drained];
    expect(ended).toBeGreaterThan(types.lastIndexOf('sglang.input_audio.accepted'));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set(order).size).toBe(6);
    expect(drained).toBe(types.length - 1);

    const accepted = client.events.filter((e) => e.type === 'sglang.input_audio.accepted');
    expect(accepted.map((e) => e.accepted_end_ms)).toEqual([80, 160, 180]);
    expect(accepted.map((e) => e.client_event_id)).toEqual(['a0', 'a1', 'a2']);
    expect(client.events[ended]).toMatchObject({ type: 'sglang.input_audio.ended', client_event_id: 'end_1', accepted_end_ms: 180, tail_policy: 'pad' });
    // Three units: two whole packets and the 20 ms tail, padded; its output is a whole unit.
    expect(client.events[lastAudio]).toMatchObject({ sglang: { unit_id: 'unit_2', media_time: { t_start_ms: 160, duration_ms: 20 } } });
    expect(Buffer.from(client.events[lastAudio].delta as string, 'base64')).toHaveLength(OUTPUT_UNIT_BYTES);
    expect(client.events[lastUnitDone]).toMatchObject({ unit_id: 'unit_2', sglang: { media_time: { t_start_ms: 160, duration_ms: 20 } } });
    expect(types.filter((t) => t === 'response.output_audio.delta')).toHaveLength(3);
    expect(types.filter((t) => t === 'sglang.unit.done')).toHaveLength(3);
    expect(client.events[responseDone]).toMatchObject({ response: { id: 'resp_0', status: 'completed', status_details: { reason: 'stop' } } });
    expect(client.events[drained]).toMatchObject({ client_event_id: 'end_1', accepted_end_ms: 180, consumed_ms: 180, discarded_ms: 0, padding_ms: 60 });
  });

  it('ends unit-aligned input with an empty unit after the response is done', async () => {
    await start();
    const client = await connect();
    client.send(append(0));
    client.send(append(1));
    client.send(nativeInputEnd('end_1'));
    await client.waitForType('sglang.input_audio.drained');
    const units = client.events.filter((e) => e.type === 'sglang.unit.done');
    expect(units.map((u) => (u.sglang as { media_time: unknown }).media_time)).toEqual([
      { t_start_ms: 0, duration_ms: 80 },
      { t_start_ms: 80, duration_ms: 80 },
      { t_start_ms: 160, duration_ms: 0 },
    ]);
    expect(client.types().slice(-3)).toEqual(['response.done', 'sglang.unit.done', 'sglang.input_audio.drained']);
    expect(client.events.at(-1)).toMatchObject({ accepted_end_ms: 160, consumed_ms: 160, padding_ms: 0 });
  });

  it('answers session.close with session.closed echoing its event id, cancels an open response first, and counts the session completed', async () => {
    const m = await start();
    const client = await connect();
    client.send(append(0));
    client.send(nativeSessionClose('close_7'));
    await client.waitForType('session.closed');
    expect(client.types().slice(-3)).toEqual(['response.output_audio.done', 'response.done', 'session.closed']);
    expect(client.events.at(-2)).toMatchObject({ response: { status: 'cancelled', status_details: { reason: 'client_closed' } } });
    expect(client.events.at(-1)).toMatchObject({ type: 'session.closed', client_event_id: 'close_7', reason: 'client_closed' });
    expect(m.stats().sessions).toMatchObject({ opened: 1, completed: 1, active: 1 });
  });

  it('refuses an upgrade beyond max_sessions with HTTP 503 and counts it', async () => {
    const m = await start({ max_sessions: 1 });
    await connect();
    expect(await upgradeStatus(m.url)).toBe(503);
    expect(await upgradeStatus(m.url)).toBe(503);
    expect(m.stats().sessions).toMatchObject({ opened: 1, refused_503: 2, active: 1 });
    // Each decision is logged with its time and the sessions held just before it.
    const { admissions } = m.stats();
    expect(admissions).toMatchObject({ accepted: 1, refused: 2, not_kept: 0 });
    expect(admissions.log.map((a) => [a.outcome, a.held])).toEqual([['accepted', 0], ['refused', 1], ['refused', 1]]);
    expect(admissions.log[0].t_s).toBeLessThanOrEqual(admissions.log[2].t_s);
  });

  it('counts a socket error (a frame that breaks the WebSocket rules) and ends that session', async () => {
    const m = await start();
    const client = await connect();
    // A text frame with RSV1 set and no extension agreed: the server's socket reports an error.
    (client.ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(Buffer.from([0xc1, 0x80, 0, 0, 0, 0]));
    const closed = await client.closed;
    expect(closed.code).toBe(1002);
    expect(m.stats().socket_errors).toBe(1);
  });

  it('counts every append in its arrival deviation, measured from packet 0 by t_start_ms', async () => {
    let now_s = 100;
    const m = await start({ clock: { ...nodeTimerHost, now_s: () => now_s } });
    const client = await connect();
    // Arrivals 0, 80, 400 and 250 ms after packet 0 for t_start 0, 80, 160, 240: deviations 0, 0, 240, 10.
    for (const [seq, at_ms] of [
      [0, 0],
      [1, 80],
      [2, 400],
      [3, 250],
    ]) {
      now_s = 100 + at_ms / 1000;
      client.send(append(seq));
      await client.waitForType('sglang.input_audio.accepted', seq + 1);
    }
    await client.barrier();
    const stats = m.stats();
    expect(stats.appends).toBe(4);
    expect(stats.arrival_deviation_ms.count).toBe(4);
    expect(stats.arrival_deviation_ms.p50).toBe(0);
    expect(stats.arrival_deviation_ms.max).toBeGreaterThanOrEqual(240);
    expect(stats.arrival_deviation_ms.max).toBeLessThan(240.5);
    expect(stats.arrivals_late).toBe(1);
    expect(stats.frames_sent).toBe(client.texts.length);
    expect(Object.keys(stats.measurement_origin)).toEqual(expect.arrayContaining(['arrival_deviation_ms']));
  });

  it('answers a frame that is not JSON (small, or a large append cut inside), and a binary frame, with non-fatal errors', async () => {
    await start();
    const client = await connect();
    client.send('not json');
    client.ws.send(Buffer.from([1, 2]));
    // Its type leads and it ends in a brace, so only parsing it whole shows it is broken.
    const cut = append(0).toString();
    client.send(cut.slice(0, 600) + cut.slice(-2));
    await client.waitForType('error', 3);
    const [malformed, binary, cutAppend] = client.events.filter((e) => e.type === 'error');
    expect(malformed).toMatchObject({ error: { code: 'malformed_frame' }, sglang: { fatal: false } });
    expect(binary).toMatchObject({ error: { code: 'binary_frame' }, sglang: { fatal: false } });
    expect(cutAppend).toMatchObject({ error: { code: 'malformed_frame' }, sglang: { fatal: false } });
    expect(client.types()).not.toContain('sglang.input_audio.accepted');
  });

  describe('startFaultyMock', () => {
    async function faultAfterTwo(action: MockFault['action']): Promise<RawClient> {
      await start({}, { after_appends: 2, action });
      const client = await connect();
      client.send(append(0));
      client.send(append(1));
      return client;
    }

    const firstAppendOnly = [
      'session.created',
      'sglang.input_audio.accepted',
      'response.created',
      'response.output_audio.delta',
      'response.output_audio_transcript.delta',
      'sglang.unit.done',
    ];

    it('close: closes the session with 1011 instead of answering the append', async () => {
      const client = await faultAfterTwo('close');
      const closed = await client.closed;
      expect(closed).toEqual({ code: 1011, reason: 'injected fault' });
      expect(client.types()).toEqual(firstAppendOnly);
    });

    it('malformed_frame: sends a frame that is not JSON instead of answering the append', async () => {
      const client = await faultAfterTwo('malformed_frame');
      client.send(nativeSessionClose('c'));
      await client.waitForType('session.closed');
      expect(client.texts[firstAppendOnly.length]).toBe('{"type":"sglang.input_audio.accepted","seq":');
      expect(() => JSON.parse(client.texts[firstAppendOnly.length])).toThrow(SyntaxError);
      expect(client.types()).toEqual([...firstAppendOnly, undefined, 'response.output_audio.done', 'response.done', 'session.closed']);
    });

    it('fatal_error: sends a fatal error event instead of answering the append, then session.closed, then closes', async () => {
      const client = await faultAfterTwo('fatal_error');
      expect(await client.closed).toMatchObject({ code: 1011 });
      expect(client.types()).toEqual([...firstAppendOnly, 'error', 'session.closed']);
      expect(client.events.at(-2)).toMatchObject({ error: { code: 'injected_fault', event_id: 'a1' }, sglang: { fatal: true } });
    });

    it('refuse_appends: answers every append from then on with a non-fatal error and accepts none', async () => {
      const client = await faultAfterTwo('refuse_appends');
      client.send(append(2));
      await client.waitForType('error', 2);
      expect(client.types()).toEqual([...firstAppendOnly, 'error', 'error']);
      expect(client.events.at(-1)).toMatchObject({ error: { code: 'input_rejected', event_id: 'a2' }, sglang: { fatal: false } });
    });

    it('non_finite: answers the append with a receipt whose number JSON cannot hold', async () => {
      const client = await faultAfterTwo('non_finite');
      await client.waitFor('the receipt', (events) => events.length > firstAppendOnly.length);
      expect(client.texts.at(-1)).toContain('"accepted_end_ms":1e999');
      expect(JSON.parse(client.texts.at(-1) as string).accepted_end_ms).toBe(Infinity);
    });

    it('drop: ends the connection without a close frame', async () => {
      const client = await faultAfterTwo('drop');
      expect((await client.closed).code).toBe(1006);
    });

    it('close_in_handshake: closes the socket when session.update arrives', async () => {
      await start({}, { after_appends: 0, action: 'close_in_handshake' });
      const client = await connect();
      client.send(nativeSessionUpdate('u1'));
      expect(await client.closed).toMatchObject({ code: 1011 });
      expect(client.types()).toEqual(['session.created']);
    });

    it('after_appends 0: the fault comes right after session.updated, before any append', async () => {
      await start({}, { after_appends: 0, action: 'fatal_error' });
      const client = await connect();
      client.send(nativeSessionUpdate('u1'));
      await client.closed;
      expect(client.types()).toEqual(['session.created', 'session.updated', 'error', 'session.closed']);
    });

    it('stop_answering: goes silent, the socket stays open', async () => {
      const client = await faultAfterTwo('stop_answering');
      client.send(append(2));
      client.send(nativeInputEnd('end_1'));
      client.send(nativeSessionClose('c'));
      await client.barrier();
      expect(client.types()).toEqual(firstAppendOnly);
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
    });

    it('leaves sessions alone until they reach after_appends', async () => {
      await start({}, { after_appends: 3, action: 'close' });
      const client = await connect();
      client.send(append(0));
      client.send(append(1));
      await client.waitForType('sglang.unit.done', 2);
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
    });
  });
});

describe('capacity_sessions: the behaviour load is the sessions open over the capacity', () => {
  let mock: MockServer | undefined;
  let clients: RawClient[] = [];
  afterEach(async () => {
    for (const client of clients) client.ws.terminate();
    await Promise.all(clients.map((c) => c.closed));
    clients = [];
    await mock?.close();
    mock = undefined;
  });

  /**
   * A native model mock with `capacity_sessions: 2` on a virtual clock, `open` sessions open on it
   * (the others idle): one hears a question and, 1.8 s after it, `stop` said over the answer, each
   * 80 ms append sent once the clock reads its start (a ping after it, so the mock stamped it then).
   */
  async function bargeIn(open: number) {
    const time = new VirtualTime();
    mock = await startMockServer({ port: 0, profile: 'nemotron', capacity_sessions: 2, behaviour: { respond_after_ms: 400, stop_after_ms: 200, answer_ms: 5000 }, clock: time });
    const url = mock.url;
    const [speaker] = await Promise.all(Array.from({ length: open }, () => RawClient.connect(url, clients)));
    await speaker.waitForType('session.created');
    speaker.send(nativeSessionUpdate('u'));
    await speaker.waitForType('session.updated');
    const input = scriptedInput([{ say: 'q1' }, { silence_ms: 1800 }, { say: 'stop' }, { silence_ms: 2000 }], 16000);
    for (const [seq, audio] of packets(input.pcm, 16000).entries()) {
      await time.advance(seq * 80 - time.now);
      speaker.send(nativeAppend(`a${seq}`, seq, seq * 80, Buffer.from(audio)));
      await speaker.barrier();
    }
    await time.advance(1000);
    const heard = (mock.stats().behaviour?.sessions ?? []).filter((s) => s.events.length > 0);
    expect(heard).toHaveLength(1);
    const events = heard[0].events;
    const of = <K extends BehaviourEvent['kind']>(kind: K) => events.filter((e): e is Extract<BehaviourEvent, { kind: K }> => e.kind === kind);
    return { of, says: input.says, active: mock.stats().sessions.active };
  }

  it.each([
    { open: 1, respond_ms: 400, stop_ms: 200 },
    { open: 3, respond_ms: 600, stop_ms: 300 },
  ])('$open session(s) open on a capacity of 2: answers $respond_ms ms after the turn ends, stops $stop_ms ms after a barge-in', async ({ open, respond_ms, stop_ms }) => {
    const { of, says, active } = await bargeIn(open);
    expect(active).toBe(open);
    const [q1, stop] = says;
    const [end] = of('speech_end');
    expect(end.t_ms).toBeCloseTo(q1.offset_ms, 3);
    expect(of('answer_start')[0].due_ms - end.t_ms).toBeCloseTo(respond_ms, 3);
    const [barge] = of('barge_in');
    expect(barge.t_ms).toBeCloseTo(stop.onset_ms, 3);
    expect((barge.stop_at_ms ?? NaN) - barge.t_ms).toBeCloseTo(stop_ms, 3);
  });
});
