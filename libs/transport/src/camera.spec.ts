import { VirtualTime } from '@duplex-bench/pacer/testing';
import { FrameTimes, vllmUnitClosesAt } from './camera';
import { FakeServer } from './fake-server';
import type { CameraFrames } from './flow';
import { NativeFlow } from './native-flow';
import { vllmFramePlan, VllmOmniFlow } from './vllm-omni-flow';

const frame = (tag: number, bytes = 100) => Buffer.from(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, tag]), Buffer.alloc(bytes - 4)]).toString('base64'), 'latin1');
const camera = (n: number, fps: number | null = null, bytes = 100): CameraFrames => ({ base64: Array.from({ length: n }, (_, i) => frame(i, bytes)), bytes: Array(n).fill(bytes), fps });
const PACKET = Buffer.from(Buffer.alloc(2560).toString('base64'), 'latin1');

describe('FrameTimes', () => {
  it('closedBy: each frame once, when the audio sent has closed the unit it was captured in', () => {
    const t = new FrameTimes(camera(2), 500);
    expect(t.closedBy(1000, vllmUnitClosesAt)).toEqual([]);
    expect(t.closedBy(1030, vllmUnitClosesAt).map((f) => f.t_ms)).toEqual([0, 500]);
    expect(t.closedBy(2029.9, vllmUnitClosesAt)).toEqual([]);
    expect(t.closedBy(3040, vllmUnitClosesAt).map((f) => f.t_ms)).toEqual([1000, 1500, 2000, 2500]);
    expect([vllmUnitClosesAt(0), vllmUnitClosesAt(999.9), vllmUnitClosesAt(1000), vllmUnitClosesAt(2500)]).toEqual([1030, 1030, 2030, 3030]);
  });

  it('hands out each frame once, at k x period, its image looped over the frames', () => {
    const frames = camera(2);
    const t = new FrameTimes(frames, 1000);
    const first = t.upTo(80);
    expect(first.map((f) => f.t_ms)).toEqual([0]);
    expect(t.upTo(1000)).toEqual([]);
    const due = t.upTo(3000);
    expect(due.map((f) => f.t_ms)).toEqual([1000, 2000]);
    expect([first[0].image, due[0].image, due[1].image]).toEqual([frames.base64[0], frames.base64[1], frames.base64[0]]);
    expect([t.sent, t.bytes]).toEqual([3, 300]);
  });

  it('holds the last frame once the frames run out, when asked to', () => {
    const frames = camera(2);
    const t = new FrameTimes(frames, 1000, 'hold');
    const due = t.upTo(4000);
    expect(due.map((f) => f.t_ms)).toEqual([0, 1000, 2000, 3000]);
    expect(due.map((f) => f.image)).toEqual([frames.base64[0], frames.base64[1], frames.base64[1], frames.base64[1]]);
    expect([t.sent, t.bytes]).toEqual([4, 400]);
  });

  it('holds the last frame on vLLM-Omni sessions, as their client does when the audio outlives the clip', () => {
    const frames = camera(2);
    for (const capabilities of [undefined, { optional_input_modalities: ['image'], supports_image_input: true }]) {
      const { times } = vllmFramePlan(frames, capabilities);
      expect(times.upTo(3001).map((f) => f.image)).toEqual([frames.base64[0], frames.base64[1], frames.base64[1], frames.base64[1]]);
    }
  });
});

/** A native server in virtual time granting `granted`, answering the session's opening. */
function nativeServer(time: VirtualTime, granted: Record<string, unknown>) {
  return new FakeServer(time, () => ({
    accept: (side) => {
      side.send({ type: 'session.created', event_id: 'e0', session: { id: 's' } });
      side.onMessage((e) => {
        if (e.type === 'session.update') side.send({ type: 'session.updated', event_id: 'e1', session: { id: 's', sglang: { granted: { native_unit_ms: 1000, output_audio_format: { rate: 24000 }, ...granted } } } });
      });
    },
  }));
}

async function nativeSession(video: CameraFrames, granted: Record<string, unknown>) {
  const time = new VirtualTime();
  const server = nativeServer(time, granted);
  const conn = server.connect('ws://fake/v1/realtime', {});
  const flow = new NativeFlow('s0', video);
  flow.attach(conn);
  const shaken = await time.run(flow.handshake(conn, 16000, {}).catch((e: unknown) => e));
  return { time, conn, flow, side: server.sessions[0], shaken };
}

const IMAGE_GRANT = { input_modalities: ['audio', 'image'], input_image_format: { types: ['image/jpeg'], max_bytes: 524288, max_frames_per_unit: 1 } };

describe('NativeFlow with camera frames (sglang.input_image.append)', () => {
  it("sends one frame per unit before the unit's first packet, at the unit's start, each a JPEG, and counts them", async () => {
    const { time, conn, flow, side } = await nativeSession(camera(2), IMAGE_GRANT);
    for (let seq = 0; seq < 26; seq++) conn.send(flow.append(`s0_a${seq}`, seq, seq * 80, PACKET));
    await time.advance(1);
    const sent = side.received.map((e) => (e.type === 'sglang.input_image.append' ? `img@${(e.sglang as { t_ms: number }).t_ms}` : e.type === 'input_audio_buffer.append' ? `a${(e.sglang as { seq: number }).seq}` : String(e.type)));
    // Units of 1000 ms: packet 0, 13 (1040 ms) and 25 (2000 ms) start units 0, 1 and 2.
    expect(sent.filter((s) => s.startsWith('img') || ['a0', 'a12', 'a13', 'a24', 'a25'].includes(s))).toEqual(['img@0', 'a0', 'a12', 'img@1000', 'a13', 'a24', 'img@2000', 'a25']);
    const images = side.received.filter((e) => e.type === 'sglang.input_image.append');
    for (const e of images) expect(Buffer.from(String(e.image), 'base64').subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(Object.keys(images[0]).sort()).toEqual(['event_id', 'image', 'sglang', 'type']);
    expect(flow.dialectEvents()).toEqual({ frames_sent: 3, frame_bytes: 300 });
  });

  it('refuses at the handshake, naming why, a grant without image input, more frames per unit than it takes, or a frame over its bytes', async () => {
    expect(String((await nativeSession(camera(1), {})).shaken)).toMatch(/--video: the server grants no image input/);
    expect(String((await nativeSession(camera(1, 2), IMAGE_GRANT)).shaken)).toMatch(/--video-fps 2: 2 frames per 1000 ms unit; the server takes at most 1/);
    expect(String((await nativeSession(camera(1, null, 600_000), IMAGE_GRANT)).shaken)).toMatch(/a frame of 600000 bytes; the server takes at most 524288/);
    // The older grant names the count max_per_unit.
    expect((await nativeSession(camera(1, 2), { ...IMAGE_GRANT, input_image_format: { max_bytes: 524288, max_per_unit: 2 } })).shaken).toMatchObject({ native_unit_ms: 1000 });
  });
});

async function vllmSession(video: CameraFrames, capabilities: Record<string, unknown>) {
  const time = new VirtualTime();
  const server = new FakeServer(time, () => ({ accept: (side) => side.onMessage((e) => e.type === 'session.update' && side.send({ type: 'session.created', session: { capabilities: { chunk_period_ms: 1000, ...capabilities } } })) }));
  const conn = server.connect('ws://fake/v1/realtime', {});
  const flow = new VllmOmniFlow('s0', { turn_detection: 'none', commit_every_packets: Infinity, video, no_playback_ack: true });
  flow.attach(conn);
  const shaken = await time.run(flow.handshake(conn, 16000, {}).catch((e: unknown) => e));
  return { time, conn, flow, side: server.sessions[0], shaken };
}

describe('VllmOmniFlow with camera frames', () => {
  it("puts frame k in video_frames on the append that closes model unit k (1030 + k x 1000 ms of audio, their client's duplex_unit_boundary_ms), when the capabilities state no modality contract", async () => {
    const { time, conn, flow, side } = await vllmSession(camera(3), {});
    for (let seq = 0; seq < 38; seq++) conn.send(flow.append(`s0_a${seq}`, seq, seq * 80, PACKET));
    await time.advance(1);
    const appends = side.received.filter((e) => e.type === 'input_audio_buffer.append');
    // 80 ms packets: the first to reach 1030 ms ends at 1040 (packet 12), 2030 at 2080 (25), 3030 at 3040 (37).
    // Frame 0 never rides the first append: it would sit on an append that closes no unit, and every later frame one unit ahead of its audio.
    const carrying = appends.filter((e) => e.video_frames);
    expect(carrying.map((e) => [e.event_id, e.audio_end_ms])).toEqual([['s0_a12', 1040], ['s0_a25', 2080], ['s0_a37', 3040]]);
    expect(carrying.map((e) => (e.video_frames as string[]).map((f) => Buffer.from(f, 'base64')[3]))).toEqual([[0], [1], [2]]);
    expect(flow.dialectEvents()).toMatchObject({ frames_sent: 3, frame_bytes: 300, image_items_deleted: 0 });
  });

  it('at 2 frames a second both frames of a unit ride its closing append; more frames a unit than an append takes are refused at the handshake', async () => {
    const { time, conn, flow, side } = await vllmSession(camera(4, 2), {});
    for (let seq = 0; seq < 26; seq++) conn.send(flow.append(`s0_a${seq}`, seq, seq * 80, PACKET));
    await time.advance(1);
    const carrying = side.received.filter((e) => e.type === 'input_audio_buffer.append' && e.video_frames);
    // Frames of 0 and 500 ms close with unit 0 (1040 ms), those of 1000 and 1500 ms with unit 1 (2080 ms).
    expect(carrying.map((e) => [e.audio_end_ms, (e.video_frames as string[]).map((f) => Buffer.from(f, 'base64')[3])])).toEqual([[1040, [0, 1]], [2080, [2, 3]]]);
    expect(flow.dialectEvents()).toMatchObject({ frames_sent: 4, frame_bytes: 400 });
    expect(String((await vllmSession(camera(4, 2.5), {})).shaken)).toMatch(/^.*--video-fps 2\.5: 3 frames per 1000 ms unit; an append takes at most 2 video_frames$/);
    // As items (no append to ride) a faster camera is taken.
    expect((await vllmSession(camera(4, 4), { optional_input_modalities: ['image'], supports_image_input: true })).shaken).not.toBeInstanceOf(Error);
  });

  it('refuses at the handshake a frame over the 4,000,000 base64 characters of one video_frames entry', async () => {
    expect(String((await vllmSession(camera(1, null, 3_000_001), {})).shaken)).toMatch(/over the 4000000 base64 characters the server takes of one video_frames entry/);
    expect((await vllmSession(camera(1, null, 3_000_000), {})).shaken).not.toBeInstanceOf(Error);
  });

  it('sends input_image items when the session lists image input without video, deleting the oldest once 8 are live', async () => {
    const { time, conn, flow, side } = await vllmSession(camera(2, 4), { required_input_modalities: ['audio'], optional_input_modalities: ['image'], supports_image_input: true });
    for (let seq = 0; seq < 30; seq++) conn.send(flow.append(`s0_a${seq}`, seq, seq * 80, PACKET));
    await time.advance(1);
    const frames = side.received.filter((e) => e.type === 'conversation.item.create' || e.type === 'conversation.item.delete');
    // 4 a second over 2.4 s of audio: 10 frames, so the 9th and 10th each first delete the oldest.
    expect(frames.map((e) => (e.type === 'conversation.item.delete' ? `del ${e.item_id}` : 'create')).slice(7)).toEqual(['create', 'del s0_frame_0', 'create', 'del s0_frame_1', 'create']);
    const item = frames[0].item as { id: string; role: string; content: Array<{ type: string; image_url: string }> };
    expect(item).toMatchObject({ id: 's0_frame_0', type: 'message', role: 'user' });
    expect(item.content[0].image_url).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    expect(side.received.filter((e) => e.type === 'input_audio_buffer.append' && 'video_frames' in e)).toEqual([]);
    expect(flow.dialectEvents()).toMatchObject({ frames_sent: 10, image_items_deleted: 2 });
  });

  it('refuses at the handshake a session that takes neither, and items over their share of the 4 MiB window', async () => {
    expect(String((await vllmSession(camera(1), { required_input_modalities: ['audio'] })).shaken)).toMatch(/takes neither video_frames on appends nor input_image items/);
    expect(String((await vllmSession(camera(1, null, 400_000), { optional_input_modalities: ['image'], supports_image_input: true })).shaken)).toMatch(/over its share of the image window/);
  });
});
