/** A server event as a spec reads it back. */
export type Event = Record<string, unknown> & { type: string };

/** The server side of a socket, as a mock session uses it: what went out (each frame with its time), and how it was ended. */
export class FakeSocket {
  readonly OPEN = 1;
  readyState = 1;
  readonly frames: Array<{ t_ms: number; event: Event }> = [];
  readonly closes: Array<{ code: number; reason: string }> = [];
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
    this.readyState = 2;
  }
  terminate(): void {
    this.readyState = 3;
  }
  /** The types of the frames sent, in order. */
  types(): string[] {
    return this.frames.map((f) => f.event.type);
  }
  /** When each frame of `type` went out, ms. */
  times(type: string): number[] {
    return this.frames.filter((f) => f.event.type === type).map((f) => f.t_ms);
  }
  /** The codes of the error events sent, in order. */
  errorCodes(): string[] {
    return this.frames.filter((f) => f.event.type === 'error').map((f) => (f.event.error as { code: string }).code);
  }
}
