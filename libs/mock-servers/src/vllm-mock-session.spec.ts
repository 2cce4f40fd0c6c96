import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import type { MockHost } from './openai-mock-session';
import { VllmMockSession, type VllmMockOptions, type VllmSlot } from './vllm-mock-session';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';

const OPTIONS: VllmMockOptions = { output_sample_rate: 24000, unit_ms: 80, ttfp_ms: 200, rtf: 0.5, silence_ms: 160, listen_every: 0, config_timeout_ms: 10_000, journal_max_bytes: 8 * 2 ** 20 };

/** One vllm-omni session on a host in virtual time, its slot a fake that records what it was told. */
function session(o: Partial<VllmMockOptions> = {}) {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const ws = new FakeSocket();
  const slotCalls: string[] = [];
  let completed = 0;
  const host: MockHost = {
    clock,
    send: (_w, frame) => ws.frames.push({ t_ms: scheduler.now(), event: JSON.parse(frame) as Event }),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: () => undefined,
    completed: () => completed++,
    behaviourLog: (id) => new BehaviourLog(id),
  };
  const slot: VllmSlot = {
    limit: 2,
    take: () => (slotCalls.push('take'), true),
    released: () => slotCalls.push('released'),
    disconnected: () => slotCalls.push('disconnected'),
  };
  const s = new VllmMockSession(ws as unknown as WebSocket, host, 'mock_0', { ...OPTIONS, ...o }, slot);
  const send = (event: Record<string, unknown>) => s.onMessage(Buffer.from(JSON.stringify(event)), false, clock.now_s());
  const at = (t_ms: number, fn: () => void) => scheduler.schedule(fn, t_ms);
  const events = () => ws.frames.map((f) => f.event);
  const of = (type: string) => events().filter((e) => e.type === type);
  const types = () => events().map((e) => e.type);
  const codes = () => of('error').map((e) => (e.error as { code: string }).code);
  /** 80 ms appends at 16 kHz, one every 80 ms from `from_ms`: a tone loud enough to be speech, or silence. */
  const speak = (from_ms: number, loud: boolean[]) => loud.forEach((l, i) => at(from_ms + i * 80, () => send({ type: 'input_audio_buffer.append', audio: pcm(80, l) })));
  return { scheduler, ws, session: s, send, at, events, of, types, codes, speak, slotCalls, completed: () => completed };
}

/** `ms` of 16 kHz PCM16: a 440 Hz tone at −20 dBFS, or silence. */
function pcm(ms: number, loud: boolean, amplitude = 3277): string {
  const n = 16 * ms;
  const out = Buffer.alloc(n * 2);
  if (loud) for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(amplitude * Math.SQRT2 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  return out.toString('base64');
}

const seqOf = (e: Event) => e.server_event_seq as number | undefined;

describe('VllmMockSession', () => {
  describe('the opening', () => {
    it('answers session.update with session.created (unnumbered) and session.updated (numbered 1): ack-only playback, the chunk period, the rates', () => {
      const s = session();
      s.send({ type: 'session.update', session: { model: 'minicpm-o', audio: { input: { sample_rate_hz: 16000 }, output: { sample_rate_hz: 22050 } }, turn_detection: { type: 'server_vad' } } });
      const [created, updated] = s.events();
      expect(created).toMatchObject({ type: 'session.created', event_id: 'event_mock_0_0' });
      expect(seqOf(created)).toBeUndefined();
      expect(updated).toMatchObject({ type: 'session.updated', server_event_seq: 1 });
      expect(updated.session).toEqual({
        id: 'mock_0',
        object: 'realtime.session',
        type: 'realtime',
        model: 'minicpm-o',
        modalities: ['audio', 'text'],
        playback_commit_policy: 'ack_only',
        capabilities: { chunk_period_ms: 80, required_input_modalities: ['audio'], optional_input_modalities: ['video'], supports_image_input: false },
        audio: { input: { sample_rate_hz: 16000 }, output: { sample_rate_hz: 22050 } },
        turn_detection: { type: 'server_vad' },
      });
      expect(s.slotCalls).toEqual(['take']);
    });

    it("states its own output rate when the client asks none, and takes the input rate from sample_rate_hz", () => {
      const s = session();
      s.send({ type: 'session.update', session: { sample_rate_hz: 24000 } });
      expect(s.of('session.updated')[0].session).toMatchObject({ model: 'duplex-bench-mock', audio: { input: { sample_rate_hz: 24000 }, output: { sample_rate_hz: 24000 } }, turn_detection: null });
    });

    it('opens on whatever the client sends first, then handles that event', () => {
      const s = session();
      s.send({ type: 'session.heartbeat' });
      expect(s.types()).toEqual(['session.created', 'session.updated', 'session.heartbeat_ack']);
      expect(s.of('session.heartbeat_ack')[0]).toMatchObject({ session_id: 'mock_0', server_event_seq: 2 });
    });

    it('no longer times out once opened', () => {
      const s = session({ config_timeout_ms: 1000 });
      s.at(500, () => s.send({ type: 'session.update', session: {} }));
      s.scheduler.flush();
      expect(s.codes()).toEqual([]);
      expect(s.ws.closes).toEqual([]);
    });

    it('takes a reference voice from session.ref_audio or extra_body.tts_ref_audio, and asks none of a text-only session', () => {
      for (const opening of [{ ref_audio: 'v.wav' }, { extra_body: { tts_ref_audio: 'v.wav' } }, { modalities: ['text'] }]) {
        const s = session({ require_ref_audio: true });
        s.send({ type: 'session.update', session: opening });
        expect(s.types()).toEqual(['session.created', 'session.updated']);
      }
      const refused = session({ require_ref_audio: true });
      refused.send({ type: 'session.update', event_id: 'u1', session: { modalities: ['Audio'] } });
      expect(refused.events()).toEqual([{ type: 'error', error: { type: 'invalid_request_error', code: 'ref_audio_required', message: 'Native duplex audio output requires ref_audio', event_id: 'u1', param: 'ref_audio' } }]);
      expect(refused.ws.closes).toEqual([{ code: 1000, reason: 'ref_audio_required' }]);
      expect(refused.slotCalls).toEqual([]);
    });
  });

  describe('client events', () => {
    it('refuses a frame that is not JSON, a binary frame, an unknown type and a bad event ack, unnumbered, and goes on', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.session.onMessage(Buffer.from('{"type":'), false, 0);
      s.session.onMessage(Buffer.from('{}'), true, 0);
      s.send({ type: 'conversation.item.retrieve', event_id: 'x1' });
      for (const n of [-1, 1.5, 99, 'one']) s.send({ type: 'session.event_ack', server_event_seq: n });
      const errors = s.of('error');
      expect(s.codes()).toEqual(['invalid_json', 'invalid_json', 'unknown_event', 'invalid_event_ack', 'invalid_event_ack', 'invalid_event_ack', 'invalid_event_ack']);
      expect(errors[2].error).toMatchObject({ event_id: 'x1', message: 'Unknown event type: conversation.item.retrieve' });
      expect(errors.every((e) => seqOf(e) === undefined)).toBe(true);
      s.send({ type: 'session.heartbeat' });
      expect(seqOf(s.of('session.heartbeat_ack')[0])).toBe(2);
    });

    it('asks for a resync once unacknowledged journal bytes pass the bound, an event ack trimming them, and numbers nothing after', () => {
      // The bytes of the numbered frames, measured on a session that never resyncs.
      const probe = session();
      probe.send({ type: 'session.update', session: {} });
      probe.send({ type: 'session.heartbeat' });
      const [updated_bytes, ack_bytes] = probe.events().slice(1).map((e) => JSON.stringify(e).length);
      // Room for the opening and two and a half heartbeat acks.
      const journal_max_bytes = updated_bytes + 2.5 * ack_bytes;

      const trimmed = session({ journal_max_bytes });
      trimmed.send({ type: 'session.update', session: {} });
      for (let i = 0; i < 2; i++) trimmed.send({ type: 'session.heartbeat' });
      trimmed.send({ type: 'session.event_ack', server_event_seq: 3 });
      for (let i = 0; i < 3; i++) trimmed.send({ type: 'session.heartbeat' });
      expect(trimmed.types()).not.toContain('session.resync_required');

      const s = session({ journal_max_bytes });
      s.send({ type: 'session.update', session: {} });
      for (let i = 0; i < 5; i++) s.send({ type: 'session.heartbeat' });
      expect(s.types()).toEqual(['session.created', 'session.updated', 'session.heartbeat_ack', 'session.heartbeat_ack', 'session.heartbeat_ack', 'session.resync_required', 'session.heartbeat_ack', 'session.heartbeat_ack']);
      expect(s.of('session.resync_required')[0]).toMatchObject({ session_id: 'mock_0', reason: 'journal_overflow' });
      expect(s.events().map(seqOf)).toEqual([undefined, 1, 2, 3, 4, undefined, undefined, undefined]);
    });

    it('numbers every event it journals in order, with no gap', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, true, false, false]);
      s.scheduler.flush();
      const seqs = s.events().flatMap((e) => (seqOf(e) === undefined ? [] : [seqOf(e) as number]));
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(seqs.length).toBeGreaterThan(10);
    });
  });

  describe('turns', () => {
    it("hears speech by RMS: speech_started at the append's start, speech_stopped silence_ms later by the input, and a tone under the threshold is no speech", () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [false, true, true, false, false, false]);
      s.scheduler.flush();
      expect(s.of('input_audio_buffer.speech_started').map((e) => [e.audio_start_ms, e.item_id])).toEqual([[80, 'item_in_0']]);
      // Two silent appends (160 ms) after the speech ended at 240 ms of input.
      expect(s.of('input_audio_buffer.speech_stopped').map((e) => [e.audio_end_ms, e.item_id])).toEqual([[400, 'item_in_0']]);

      const quiet = session();
      quiet.send({ type: 'session.update', session: {} });
      // RMS 0.002 of full scale: under vLLM-Omni's 0.003.
      for (let i = 0; i < 4; i++) quiet.send({ type: 'input_audio_buffer.append', audio: pcm(80, true, 65) });
      expect(quiet.of('input_audio_buffer.speech_started')).toEqual([]);
    });

    it('answers a turn with a unit of output per unit of speech: the response begun with its first audio ttfp_ms after the turn, the next every unit_ms × rtf, then the terminal events', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, true, true, false, false]);
      s.scheduler.flush();
      // The turn starts when the second silent append arrives (320 ms): 3 units of speech. The
      // response begins with its first output (520 ms), as the server begins one.
      const created = s.ws.frames.filter((f) => f.event.type === 'response.created');
      expect(created.map((f) => [f.t_ms, f.event.response_id])).toEqual([[520, 'resp_mock_0_0']]);
      const begun = s.types().slice(s.types().indexOf('response.created'), s.types().indexOf('response.output_audio.delta') + 2);
      expect(begun).toEqual(['response.created', 'conversation.item.added', 'conversation.item.created', 'response.output_item.added', 'response.content_part.added', 'response.speak', 'response.output_audio.delta', 'response.output_audio_transcript.delta']);
      // The response carries its internal event, request metrics and all; the item follows the user's.
      expect(s.of('response.created')[0].response).toMatchObject({ id: 'resp_mock_0_0', status: 'in_progress', output: [], modalities: ['audio', 'text'], metadata: { duplex_event: { type: 'response.created', response_id: 'resp_mock_0_0', response_request_metrics: { ttfp_ms: 200 } } } });
      expect(s.of('conversation.item.added')[0]).toMatchObject({ previous_item_id: null, item: { id: 'item_resp_mock_0_0', role: 'assistant', status: 'in_progress', content: [] } });
      expect(s.ws.frames.filter((f) => f.event.type === 'response.output_audio.delta').map((f) => f.t_ms)).toEqual([520, 560, 600]);
      const delta = s.of('response.output_audio.delta')[0];
      expect(delta).toMatchObject({ item_id: 'item_resp_mock_0_0', format: 'pcm16', sample_rate_hz: 24000, metadata: { session_id: 'mock_0', model_speak: true, end_of_turn: false, playback: { sent_ms: 80, played_ms: 0 }, vllm_omni: { response_request_metrics: { ttfp_ms: 200, ttft_ms: 200 } } } });
      expect(Buffer.from(delta.delta as string, 'base64')).toHaveLength(3840);
      expect((s.of('response.output_audio.delta')[2].metadata as { end_of_turn: boolean }).end_of_turn).toBe(true);
      const after = s.types().slice(s.types().lastIndexOf('response.output_audio_transcript.delta') + 1);
      expect(after).toEqual(['response.output_audio.done', 'response.output_audio_transcript.done', 'response.content_part.done', 'response.output_item.done', 'conversation.item.done', 'response.done', 'rate_limits.updated']);
      expect(s.of('response.done')[0].response).toMatchObject({ status: 'completed', status_details: { type: 'completed', reason: 'stop' }, output: [{ id: 'item_resp_mock_0_0', status: 'completed', content: [{ transcript: 'word word word ', audio_duration_ms: 240 }] }] });
    });

    it('reports stage metrics on its deltas only when the opening asked for them', () => {
      for (const asked of [true, false]) {
        const s = session();
        s.send({ type: 'session.update', session: { extra_body: { return_stage_metrics: asked } } });
        s.speak(0, [true, false, false]);
        s.scheduler.flush();
        const metadata = s.of('response.output_audio.delta')[0].metadata as { vllm_omni: Record<string, unknown> };
        expect('stage_metrics' in metadata.vllm_omni).toBe(asked);
      }
    });

    it('holds the next turn until the last response was acknowledged as played, then takes it', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, false, false]);
      s.speak(1000, [true, false, false]);
      s.at(2000, () => s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 80 }));
      s.scheduler.flush();
      // Each begun with its first audio, 200 ms after its turn.
      expect(s.ws.frames.filter((f) => f.event.type === 'response.created').map((f) => f.t_ms)).toEqual([360, 2200]);
      expect(s.session.blocked_turns).toBe(1);
      expect(s.of('playback.acknowledged')[0]).toMatchObject({ event: { type: 'playback.acknowledged', session_id: 'mock_0', epoch: 0, item_id: 'item_resp_mock_0_0', played_ms: 80, committed_ms: 80, truncate: false, playback: { sent_ms: 80, committed_ms: 80 } } });
    });

    it('keeps listening every listen_every-th turn: a response.listen of no response, and no response begun', () => {
      const s = session({ listen_every: 1 });
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, false, false]);
      s.scheduler.flush();
      expect(s.types().slice(-2)).toEqual(['input_audio_buffer.speech_stopped', 'response.listen']);
      expect(s.of('response.listen')[0]).toEqual({ type: 'response.listen', event_id: expect.any(String), session_id: 'mock_0', epoch: 0, response: { object: 'realtime.response', status: 'listening', metadata: { type: 'response.listen', session_id: 'mock_0', epoch: 0, reason: 'model_listen', model_listen: true } }, server_event_seq: expect.any(Number) });
      expect(s.of('response.created')).toEqual([]);
      expect(s.of('response.done')).toEqual([]);
      // No response began: an ack that names one is not found.
      s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 0 });
      expect(s.codes()).toEqual(['playback_item_not_found']);
      expect(s.of('error')[0]).toMatchObject({ error: { message: 'No assistant response item is registered for resp_mock_0_0.' } });
    });
  });

  describe('commits', () => {
    it('refuses an empty commit with a numbered error, and keeps listening after a commit of silence', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.send({ type: 'input_audio_buffer.commit', event_id: 'c0' });
      const empty = s.of('error')[0];
      expect(empty).toMatchObject({ error: { code: 'input_audio_buffer_empty', event_id: 'c0' }, server_event_seq: 2 });
      // An ErrorEvent of the session (realtime_events.py `resolve_commit`): the server's event_id, the commit's under error.
      expect(typeof empty.event_id).toBe('string');
      s.send({ type: 'input_audio_buffer.append', audio: pcm(80, false) });
      s.send({ type: 'input_audio_buffer.commit' });
      expect(s.types().slice(-2)).toEqual(['input_audio_buffer.committed', 'response.listen']);
      // The reason is the listen's detail, under response.metadata, as the server's Listen event renders it.
      expect(s.of('response.listen')[0].response).toEqual({ object: 'realtime.response', status: 'listening', metadata: { type: 'response.listen', session_id: 'mock_0', epoch: 0, reason: 'silence_or_noise' } });
      expect(s.of('response.listen')[0].reason).toBeUndefined();
    });

    it('ends speech in progress and takes the turn on a commit', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.send({ type: 'input_audio_buffer.append', audio: pcm(80, true) });
      s.send({ type: 'input_audio_buffer.commit' });
      expect(s.types().slice(-2)).toEqual(['input_audio_buffer.speech_stopped', 'input_audio_buffer.committed']);
      expect(s.of('input_audio_buffer.committed')[0]).toMatchObject({ previous_item_id: null, item_id: 'item_in_0', event: { type: 'input.committed', session_id: 'mock_0' } });
      // The turn is taken: its response begins with its first audio.
      s.scheduler.flush();
      expect(s.of('response.created')).toHaveLength(1);
      expect(s.of('conversation.item.added')[0].previous_item_id).toBe('item_in_0');
    });
  });

  describe('the playback ledger', () => {
    /** A session whose first response (resp_mock_0_0, 80 ms) has gone out whole. */
    function played() {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, false, false]);
      s.scheduler.flush();
      return s;
    }

    it('refuses an ack of a wrong item, of no response, of an item no response owns, or without a number of played_ms: numbered, the server\'s event_id, no client event id', () => {
      const s = played();
      s.send({ type: 'playback.ack', event_id: 'a1', response_id: 'resp_mock_0_0', item_id: 'item_other', played_ms: 10 });
      s.send({ type: 'playback.ack', event_id: 'a2', item_id: 'item_resp_nope', played_ms: 10 });
      s.send({ type: 'playback.ack', event_id: 'a3', item_id: 'other', played_ms: 10 });
      s.send({ type: 'playback.ack', event_id: 'a4', response_id: 'resp_mock_0_0', played_ms: '10' });
      s.send({ type: 'playback.ack', event_id: 'a5', response_id: 'resp_mock_0_0' });
      expect(s.codes()).toEqual(['playback_item_mismatch', 'playback_item_not_found', 'playback_item_not_found', 'bad_event', 'bad_event']);
      expect(s.of('error').map((e) => (e.error as { message: string }).message)).toEqual([
        'playback.ack item_id must match item_<response_id>.',
        'No assistant response item is registered for resp_nope.',
        'playback.ack requires a response-owned assistant item.',
        'playback.ack requires played_ms',
        'playback.ack requires played_ms',
      ]);
      expect(s.of('error').every((e) => typeof seqOf(e) === 'number' && typeof e.event_id === 'string' && (e.error as { event_id?: string }).event_id === undefined)).toBe(true);
      expect(s.of('playback.acknowledged')).toEqual([]);
    });

    it('takes an ack that names no response for the one awaiting its playback, and one naming only its item for its response', () => {
      const s = played();
      s.send({ type: 'playback.ack', played_ms: 40 });
      s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 60 });
      s.send({ type: 'playback.ack', item_id: 'item_resp_mock_0_0', played_ms: 80 });
      expect(s.codes()).toEqual([]);
      expect(s.of('playback.acknowledged').map((a) => a.event)).toMatchObject([
        { item_id: 'item_resp_mock_0_0', played_ms: 40, committed_ms: 40 },
        { item_id: 'item_resp_mock_0_0', played_ms: 60, committed_ms: 60 },
        { item_id: 'item_resp_mock_0_0', played_ms: 80, committed_ms: 80 },
      ]);
      // Played out, the response no longer holds the turn: an ack naming none names the history's one assistant item.
      s.send({ type: 'playback.ack', played_ms: 10 });
      expect(s.codes()).toEqual([]);
      expect(s.of('playback.acknowledged')[3].event).toMatchObject({ item_id: 'item_resp_mock_0_0', played_ms: 10 });
    });

    it('refuses a first ack that comes after a later user input was committed, and answers later acks of one acked before', () => {
      const late = played();
      late.send({ type: 'input_audio_buffer.append', audio: pcm(80, false) });
      late.send({ type: 'input_audio_buffer.commit' });
      late.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 80 });
      expect(late.codes()).toEqual(['playback_ack_too_late']);

      const early = played();
      early.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 40 });
      early.send({ type: 'input_audio_buffer.append', audio: pcm(80, false) });
      early.send({ type: 'input_audio_buffer.commit' });
      early.send({ type: 'playback.ack', item_id: 'item_resp_mock_0_0', played_ms: 80 });
      expect(early.codes()).toEqual([]);
      expect(early.of('playback.acknowledged')).toHaveLength(2);
    });

    it('announces a response with its first audio and binds it then: a commit between its turn and its first audio does not make its first ack too late', () => {
      const s = session({ ttfp_ms: 600 });
      s.send({ type: 'session.update', session: {} });
      // Speech, then 160 ms of silence: the turn is taken at 240 ms; its first audio is due at 840.
      s.speak(0, [true, true, false, false, false]);
      s.at(500, () => s.send({ type: 'input_audio_buffer.commit' }));
      s.scheduler.flush();
      const created = s.ws.frames.find((f) => f.event.type === 'response.created');
      const first = s.ws.frames.find((f) => f.event.type === 'response.output_audio.delta');
      expect(created?.t_ms).toBe(first?.t_ms);
      expect(created?.t_ms).toBe(240 + 600);
      // The server binds a response to the commits it has when it begins it (begin_response): the
      // commit at 500 ms came first, so the client's 0 ms ack on seeing it is taken.
      s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 0 });
      expect(s.codes()).toEqual([]);
      expect(s.of('playback.acknowledged')).toHaveLength(1);
    });

    it('with send_lag_ms, a commit that crosses a response.created on the wire makes that first ack too late', () => {
      const s = session({ ttfp_ms: 100, send_lag_ms: 300 });
      s.send({ type: 'session.update', session: {} });
      // The turn at 240 ms, its first audio (and response.created) made at 340, delivered at 640.
      s.speak(0, [true, true, false, false, false]);
      s.at(500, () => s.send({ type: 'input_audio_buffer.commit' }));
      s.scheduler.flush();
      const created = s.ws.frames.find((f) => f.event.type === 'response.created');
      expect(created?.t_ms).toBe(240 + 100 + 300);
      // Every frame comes in order, the lag behind: the session's first two as well.
      expect(s.ws.frames.slice(0, 2).map((f) => [f.event.type, f.t_ms])).toEqual([['session.created', 300], ['session.updated', 300]]);
      // The client acks it as it arrives, after its commit at 500 ms reached the server: too late.
      s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 0 });
      s.scheduler.flush();
      expect(s.codes()).toEqual(['playback_ack_too_late']);
    });

    it('answers an ack of a response fully played and done, whose item stays in history', () => {
      const s = played();
      s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 80 });
      s.send({ type: 'playback.ack', response_id: 'resp_mock_0_0', played_ms: 80 });
      expect(s.codes()).toEqual([]);
      expect(s.of('playback.acknowledged')).toHaveLength(2);
    });
  });

  describe('the end', () => {
    it('on session.close: the response stops where it is with no response.done, session.closed numbered, close 1000, the slot freed at once', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, true, true, false, false]);
      // Mid-response: the first of three deltas went out at 520 ms.
      s.at(530, () => s.send({ type: 'session.close' }));
      s.scheduler.flush();
      expect(s.of('response.output_audio.delta')).toHaveLength(1);
      expect(s.of('response.done')).toEqual([]);
      expect(s.types().at(-1)).toBe('session.closed');
      expect(s.of('session.closed')[0]).toMatchObject({ session_id: 'mock_0', reason: 'client_close' });
      expect(typeof seqOf(s.of('session.closed')[0])).toBe('number');
      expect(s.ws.closes).toEqual([{ code: 1000, reason: 'client_close' }]);
      expect(s.completed()).toBe(1);
      s.session.onSocketClose();
      expect(s.slotCalls).toEqual(['take', 'released']);
    });

    it('after the config timeout, a socket that never opened a session holds no slot', () => {
      const s = session({ config_timeout_ms: 3000 });
      s.scheduler.flush();
      expect(s.scheduler.now()).toBe(3000);
      expect(s.events()).toEqual([{ type: 'error', error: { type: 'invalid_request_error', code: 'config_timeout', message: 'Timeout waiting for session.update' } }]);
      expect(s.ws.closes).toEqual([{ code: 1000, reason: 'config_timeout' }]);
      s.session.onSocketClose();
      expect(s.slotCalls).toEqual([]);
    });

    it('a plain disconnect stops the response and holds the slot (disconnected, once)', () => {
      const s = session();
      s.send({ type: 'session.update', session: {} });
      s.speak(0, [true, true, true, false, false]);
      s.at(530, () => s.session.onSocketClose());
      s.at(600, () => s.session.onSocketClose());
      s.scheduler.flush();
      expect(s.of('response.output_audio.delta')).toHaveLength(1);
      expect(s.slotCalls).toEqual(['take', 'disconnected']);
      expect(s.completed()).toBe(0);
    });
  });
});
