import { Packr } from 'msgpackr';

/** Messages between the launcher and its children: msgpackr-encoded, sent over the IPC channel. */
export type ToChild = { kind: 'start'; gate_s: number } | { kind: 'stop' };

export type FromChild =
  | { kind: 'ready'; sessions_open: number; sessions_failed: number }
  | { kind: 'failed'; message: string }
  | { kind: 'done'; exit_code: number };

const packr = /* @__PURE__ */ new Packr(); // pure: a bundle drops it (and msgpackr) where it is unused

export function encodeMessage(message: ToChild | FromChild): Uint8Array {
  return packr.pack(message);
}

export function decodeMessage<T extends ToChild | FromChild>(bytes: unknown): T {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('launcher IPC: expected a msgpack frame');
  return packr.unpack(bytes) as T;
}

/** Set in a child's environment; its value is the child's index. */
export const CHILD_ENV = 'DUPLEX_BENCH_CHILD_INDEX';

/**
 * The child's side of the start gate. `send` never blocks the loop: Node queues IPC writes, and a
 * parent that is slow to read only delays delivery.
 */
export class LauncherLink {
  private gate: Promise<number>;

  constructor(private readonly proc: NodeJS.Process = process) {
    if (!proc.send) throw new Error('not started by the launcher (no IPC channel)');
    this.gate = new Promise((resolve) => {
      proc.on('message', (bytes: unknown) => {
        const m = decodeMessage<ToChild>(bytes);
        if (m.kind === 'start') resolve(m.gate_s);
        else if (m.kind === 'stop') proc.emit('SIGTERM', 'SIGTERM');
      });
    });
  }

  static inChild(): boolean {
    return process.env[CHILD_ENV] !== undefined && typeof process.send === 'function';
  }

  /** Reports the handshakes done and waits for the common start time (monotonic seconds). */
  ready(sessions_open: number, sessions_failed: number): Promise<number> {
    this.send({ kind: 'ready', sessions_open, sessions_failed });
    return this.gate;
  }

  failed(message: string): void {
    this.send({ kind: 'failed', message });
  }

  /** Reports the outcome, then lets go of the IPC channel so the child can exit. */
  done(exit_code: number): void {
    this.send({ kind: 'done', exit_code }, () => {
      if (this.proc.connected) this.proc.disconnect();
    });
  }

  private send(message: FromChild, sent?: () => void): void {
    this.proc.send?.(encodeMessage(message), undefined, undefined, sent);
  }
}
