import { EventEmitter } from 'node:events';
import { CHILD_ENV, decodeMessage, encodeMessage, LauncherLink, type FromChild, type ToChild } from './ipc';

/** The child's side of an IPC channel: what it sends is kept, and the parent's messages are emitted on it. */
class FakeChannel extends EventEmitter {
  sent: FromChild[] = [];
  connected = true;
  disconnects = 0;
  /** Callbacks of sends the channel has not yet flushed. */
  unflushed: Array<() => void> = [];

  send(bytes: unknown, _handle?: unknown, _options?: unknown, callback?: () => void): boolean {
    this.sent.push(decodeMessage<FromChild>(bytes));
    if (callback) this.unflushed.push(callback);
    return true;
  }

  disconnect(): void {
    this.connected = false;
    this.disconnects++;
  }

  fromParent(message: ToChild): void {
    this.emit('message', encodeMessage(message));
  }

  flush(): void {
    for (const callback of this.unflushed.splice(0)) callback();
  }
}

const linkOn = (channel: FakeChannel) => new LauncherLink(channel as unknown as NodeJS.Process);

describe('encodeMessage and decodeMessage', () => {
  it('carry every message kind through as msgpack bytes, unchanged', () => {
    const messages: Array<ToChild | FromChild> = [
      { kind: 'start', gate_s: 12345.678901 },
      { kind: 'stop' },
      { kind: 'ready', sessions_open: 7, sessions_failed: 1 },
      { kind: 'failed', message: 'cannot connect: ECONNREFUSED' },
      { kind: 'done', exit_code: 3 },
    ];
    for (const m of messages) {
      const bytes = encodeMessage(m);
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect(decodeMessage(bytes)).toEqual(m);
    }
  });

  it('refuses anything that is not a frame of bytes with a TypeError', () => {
    expect(() => decodeMessage({ kind: 'start', gate_s: 1 })).toThrow(TypeError);
    expect(() => decodeMessage('start')).toThrow('launcher IPC: expected a msgpack frame');
  });
});

describe('LauncherLink', () => {
  it('cannot be made in a process the launcher did not start (no IPC channel)', () => {
    const channel = Object.assign(new FakeChannel(), { send: undefined });
    expect(() => new LauncherLink(channel as unknown as NodeJS.Process)).toThrow('not started by the launcher (no IPC channel)');
  });

  it('reports ready with its handshakes, then resolves with the start time the parent sends', async () => {
    const channel = new FakeChannel();
    const link = linkOn(channel);
    let gate: number | undefined;
    const ready = link.ready(12, 2).then((g) => (gate = g));
    expect(channel.sent).toEqual([{ kind: 'ready', sessions_open: 12, sessions_failed: 2 }]);
    await Promise.resolve();
    expect(gate).toBeUndefined();
    channel.fromParent({ kind: 'start', gate_s: 4321.5 });
    await ready;
    expect(gate).toBe(4321.5);
  });

  it('resolves with a start that came before the child asked for it', async () => {
    const channel = new FakeChannel();
    const link = linkOn(channel);
    channel.fromParent({ kind: 'start', gate_s: 9.25 });
    await expect(link.ready(1, 0)).resolves.toBe(9.25);
  });

  it("turns the parent's stop into the child's own SIGTERM", () => {
    const channel = new FakeChannel();
    linkOn(channel);
    const signals: string[] = [];
    channel.on('SIGTERM', (s: string) => signals.push(s));
    channel.fromParent({ kind: 'stop' });
    expect(signals).toEqual(['SIGTERM']);
  });

  it('reports a failure before the gate with its message', () => {
    const channel = new FakeChannel();
    linkOn(channel).failed('cannot open 4 sessions');
    expect(channel.sent).toEqual([{ kind: 'failed', message: 'cannot open 4 sessions' }]);
  });

  it('reports done, and lets go of the channel only once the report is sent', () => {
    const channel = new FakeChannel();
    linkOn(channel).done(130);
    expect(channel.sent).toEqual([{ kind: 'done', exit_code: 130 }]);
    expect(channel.disconnects).toBe(0);
    channel.flush();
    expect(channel.disconnects).toBe(1);
  });

  it('does not disconnect a channel that is already closed', () => {
    const channel = new FakeChannel();
    linkOn(channel).done(0);
    channel.connected = false;
    channel.flush();
    expect(channel.disconnects).toBe(0);
  });
});

describe('LauncherLink.inChild', () => {
  const saved = { env: process.env[CHILD_ENV], send: process.send };
  afterEach(() => {
    if (saved.env === undefined) delete process.env[CHILD_ENV];
    else process.env[CHILD_ENV] = saved.env;
    process.send = saved.send;
  });

  it('is true only with both the child index in the environment and an IPC channel', () => {
    process.send = () => true;
    process.env[CHILD_ENV] = '0';
    expect(LauncherLink.inChild()).toBe(true);
    delete process.env[CHILD_ENV];
    expect(LauncherLink.inChild()).toBe(false);
    process.env[CHILD_ENV] = '3';
    process.send = undefined;
    expect(LauncherLink.inChild()).toBe(false);
  });
});
