import { VirtualTimeScheduler } from 'rxjs';
import type WebSocket from 'ws';
import { schedulerTimerHost } from '@duplex-bench/pacer';
import { nativeAppend, nativeGrant, nativeImageAppend, nativeInputEnd, type NativeLimits } from '@duplex-bench/protocol';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog } from './behaviour-log';
import { FakeSocket, type Event } from './fake-socket.spec-helpers';
import { NativeMockSession } from './native-mock-session';
import type { MockHost } from './openai-mock-session';
import { videoFramesError } from './vllm-frames';
import { VllmMockSession } from './vllm-mock-session';

const LIMITS: NativeLimits = { max_input_bytes: 1e9, max_output_bytes: 1e9, max_output_events: 1e6, max_history_chars: 65536, cleanup_timeout_s: 30 };
const JPEG = (n = 100) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(n - 4)]);
const b64 = (b: Buffer) => Buffer.from(b.toString('base64'), 'latin1');

function host(scheduler: VirtualTimeScheduler, ws: FakeSocket): MockHost {
  return {
    clock: schedulerTimerHost(scheduler),
    send: (_w, frame) => ws.frames.push({ t_ms: scheduler.now(), event: JSON.parse(frame) as Event }),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: () => undefined,
    completed: () => undefined,
    behaviourLog: (id) => new BehaviourLog(id),
  };
}

/** A native session whose grant lists image input (1 s units, one frame a unit, 1 KiB frames) or not. */
function nativeSession(images: boolean, frame_cost_ms = 0) {
  const scheduler = new VirtualTimeScheduler();
  const ws = new FakeSocket();
  const grant = nativeGrant(24000, 1000, LIMITS);
  if (images) {
    grant.input_modalities = ['audio', 'image'];
    grant.input_image_format = { types: ['image/jpeg'], max_bytes: 1024, max_frames_per_unit: 1, max_per_unit: 1, max_slice_nums: 9 };
  }
  const s = new NativeMockSession(ws as unknown as WebSocket, host(scheduler, ws), 'm', { grant, replies_per_unit: 2, model: null, behaviour: null, frame_cost_ms }, Buffer.alloc(48000).toString('base64'), null);
  const send = (frame: string | Buffer) => s.onMessage(Buffer.from(frame), false, scheduler.now() / 1000);
  const unit = (seq: number) => send(nativeAppend(`a${seq}`, seq, seq * 1000, b64(Buffer.alloc(32000))));
  const errors = () => ws.frames.filter((f) => f.event.type === 'error').map((f) => (f.event.error as { code: string }).code);
  return { scheduler, ws, s, send, unit, errors };
}

describe('the native mock takes camera frames as sglang-omni does', () => {
  it('binds a frame to the unit its t_ms falls in and answers sglang.input_image.accepted with that unit and the client event', () => {
    const n = nativeSession(true);
    n.send(nativeImageAppend('i0', b64(JPEG()), 0));
    expect(n.ws.frames.at(-1)?.event).toMatchObject({ type: 'sglang.input_image.accepted', unit_id: 'unit_0', client_event_id: 'i0' });
    expect(n.s.frames).toEqual({ accepted: 1, refused: 0, bytes: 100 });
  });

  it('refuses, non-fatally and by sglang-omni codes: no image grant, over max_bytes, not a JPEG, a unit already cut, past the unit count, after the input ended', () => {
    expect((() => {
      const n = nativeSession(false);
      n.send(nativeImageAppend('i0', b64(JPEG()), 0));
      return n.errors();
    })()).toEqual(['not_supported']);
    const n = nativeSession(true);
    n.send(nativeImageAppend('big', b64(JPEG(2048)), 0));
    n.send(nativeImageAppend('png?', b64(Buffer.from('not an image at all')), 0));
    n.send(nativeImageAppend('ok', b64(JPEG()), 0));
    n.send(nativeImageAppend('second', b64(JPEG()), 10));
    n.unit(0);
    n.send(nativeImageAppend('late', b64(JPEG()), 500));
    n.send(nativeInputEnd('end'));
    n.send(nativeImageAppend('after', b64(JPEG()), 1000));
    expect(n.errors()).toEqual(['buffer_overflow', 'invalid_request', 'buffer_overflow', 'invalid_state', 'invalid_state']);
    expect(n.ws.frames.filter((f) => f.event.type === 'error').every((f) => (f.event.sglang as { fatal: boolean }).fatal === false)).toBe(true);
    expect(n.s.frames).toMatchObject({ accepted: 1, refused: 5 });
  });

  it("delays a unit's answer by its frames' cost (append-echo)", () => {
    const n = nativeSession(true, 300);
    n.send(nativeImageAppend('i0', b64(JPEG()), 0));
    n.unit(0);
    n.unit(1);
    n.scheduler.flush();
    const done = n.ws.frames.filter((f) => f.event.type === 'sglang.unit.done').map((f) => f.t_ms);
    expect(done).toEqual([0, 300]);
  });
});

function vllmSession(image_items: boolean) {
  const scheduler = new VirtualTimeScheduler();
  const ws = new FakeSocket();
  const slot = { limit: 1, take: () => true, released: () => undefined, disconnected: () => undefined };
  const s = new VllmMockSession(ws as unknown as WebSocket, host(scheduler, ws), 'v', { output_sample_rate: 24000, unit_ms: 80, ttfp_ms: 0, rtf: 0, silence_ms: 500, listen_every: 0, config_timeout_ms: 10_000, journal_max_bytes: 8 * 2 ** 20, image_items }, slot);
  const send = (e: Record<string, unknown>) => s.onMessage(Buffer.from(JSON.stringify(e)), false, 0);
  send({ type: 'session.update', session: {} });
  const item = (id: string, url = `data:image/jpeg;base64,${JPEG().toString('base64')}`, role = 'user') => send({ type: 'conversation.item.create', item: { id, type: 'message', role, content: [{ type: 'input_image', image_url: url }] } });
  const codes = () => ws.frames.filter((f) => f.event.type === 'error').map((f) => (f.event.error as { code: string }).code);
  return { ws, s, send, item, codes };
}

describe('the vllm-omni mock takes camera frames as vLLM-Omni does', () => {
  it('states image input without video in its capabilities only with image_items', () => {
    expect(vllmSession(true).ws.frames[0].event.session).toMatchObject({ capabilities: { optional_input_modalities: ['image'], supports_image_input: true } });
    expect((vllmSession(false).ws.frames[0].event.session as { capabilities: Record<string, unknown> }).capabilities).toEqual({ chunk_period_ms: 80, required_input_modalities: ['audio'], optional_input_modalities: ['video'], supports_image_input: false });
  });

  it('takes up to 8 live input_image items, refuses the 9th (input_backpressure) until one is deleted, and checks role and data URL', () => {
    const v = vllmSession(true);
    for (let i = 0; i < 8; i++) v.item(`f${i}`);
    v.item('f8');
    expect(v.codes()).toEqual(['input_backpressure']);
    v.send({ type: 'conversation.item.delete', item_id: 'f0' });
    v.item('f8');
    v.item('x', 'https://example.invalid/a.jpg');
    v.item('y', undefined, 'assistant');
    expect(v.codes()).toEqual(['input_backpressure', 'invalid_image', 'invalid_image']);
    expect(v.ws.frames.filter((f) => f.event.type === 'conversation.item.deleted').map((f) => f.event)).toEqual([expect.objectContaining({ item_id: 'f0', deleted: true })]);
    expect(v.s.frames.accepted).toBe(9);
  });

  it('refuses input_image items from a model that does not state image input (unsupported), and counts video_frames on appends', () => {
    const v = vllmSession(false);
    v.item('f0');
    v.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(2560).toString('base64'), video_frames: [JPEG().toString('base64')] });
    expect(v.codes()).toEqual(['unsupported']);
    expect(v.s.frames).toEqual({ accepted: 1, refused: 1, bytes: 100 });
  });

  // vllm_omni/protocol/realtime/items.py@576bce30 (validate_realtime_video_frames), engine/duplex/contracts.py
  // (validate_append_modalities) via engine/duplex/session/manager.py@0488663b.
  const append = (frames: unknown, extra: Record<string, unknown> = {}) => ({ type: 'input_audio_buffer.append', event_id: 'c1', audio: Buffer.alloc(2560).toString('base64'), video_frames: frames, ...extra });
  const inputMs = (v: ReturnType<typeof vllmSession>) => (v.s as unknown as { bytes_in: number }).bytes_in;

  it('takes 2 frames on one append; refuses a third, a non-image, an entry over 4,000,000 base64 characters and max_slice_nums, the whole append with them (invalid_video_frames)', () => {
    const v = vllmSession(false);
    const f = JPEG().toString('base64');
    v.send(append([f, f]));
    expect(v.codes()).toEqual([]);
    v.send(append([f, f, f]));
    v.send(append([Buffer.from('GIF89a-not-an-image').toString('base64')]));
    v.send(append([`/9j/${'A'.repeat(4_000_000)}`]));
    v.send(append([f], { max_slice_nums: 2 }));
    const errors = v.ws.frames.filter((e) => e.event.type === 'error').map((e) => e.event.error as { code: string; message: string; event_id?: string });
    expect(errors.map((e) => [e.code, e.message, e.event_id])).toEqual([
      ['invalid_video_frames', 'video_frames carries more than 2 frames for one append; send ~1 frame per 1 s chunk', 'c1'],
      ['invalid_video_frames', 'video_frames entries must be JPEG or PNG images', 'c1'],
      ['invalid_video_frames', 'video_frames entry exceeds 4MB base64; reduce capture resolution or JPEG quality', 'c1'],
      ['invalid_video_frames', 'max_slice_nums is not selectable on the wire; Stage0 slices stacked units itself', 'c1'],
    ]);
    // The refused appends' audio was not taken: only the first append's 2560 bytes are in.
    expect(inputMs(v)).toBe(2560);
    expect(v.s.frames).toMatchObject({ accepted: 2, refused: 6 });
  });

  it('refuses frames on an append from a model whose capabilities list image input and not video (invalid_input_modality), the append whole', () => {
    const v = vllmSession(true);
    v.send(append([JPEG().toString('base64')]));
    expect(v.ws.frames.filter((e) => e.event.type === 'error').map((e) => e.event.error)).toEqual([
      { type: 'invalid_request_error', code: 'invalid_input_modality', message: 'This duplex model does not accept video_frames', event_id: 'c1' },
    ]);
    expect(inputMs(v)).toBe(0);
  });

  it('checks an input_image URL as a frame: not an image, invalid_image', () => {
    const v = vllmSession(true);
    v.item('x', `data:image/jpeg;base64,${Buffer.from('GIF89a-not-an-image').toString('base64')}`);
    expect(v.codes()).toEqual(['invalid_image']);
    expect(v.s.frames.accepted).toBe(0);
  });
});

describe('videoFramesError (validate_realtime_video_frames)', () => {
  const jpeg = JPEG().toString('base64');
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(20)]).toString('base64');
  it('takes up to 2 JPEG or PNG frames, null entries not counted, max_slice_nums 1 or none', () => {
    expect(videoFramesError([jpeg, png], undefined)).toBeNull();
    expect(videoFramesError([jpeg, null, png], 1)).toBeNull();
    expect(videoFramesError([], null)).toBeNull();
  });
  it('refuses what their function refuses, with its message', () => {
    expect(videoFramesError('x', null)).toBe('video_frames must be a list of base64-encoded images');
    expect(videoFramesError([jpeg, jpeg, jpeg], null)).toMatch(/more than 2 frames/);
    expect(videoFramesError([''], null)).toBe('video_frames entries must be non-empty base64 strings');
    expect(videoFramesError([3], null)).toBe('video_frames entries must be non-empty base64 strings');
  });
});
