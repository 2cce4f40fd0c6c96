import { VirtualTime } from '@duplex-bench/pacer/testing';
import { ProtocolError } from '@duplex-bench/protocol';
import { admissionBackoffMs, admissionRefusal, admitted, NATIVE_ADMISSION } from './admission';
import { TransportError } from './errors';
import { FakeServer } from './fake-server';

describe('admitted', () => {
  it('retries a 503 with the policy: 3 retries 250 ms apart by default, each refusal told, then admission_refused', async () => {
    const time = new VirtualTime();
    const server = new FakeServer(time, () => ({ refuse: 503 }));
    const refused: number[] = [];
    const t0 = time.now;
    const open = admitted(
      async () => {
        const conn = server.connect('ws://fake/x', {});
        await conn.opened;
      },
      { policy: NATIVE_ADMISSION, url: 'ws://fake/x', session_id: 's1', timers: () => time, onRefused: (n, r) => refused.push(n) && r.http_status === 503 },
    );
    const error = (await time.run(open.catch((e: unknown) => e))) as TransportError;
    expect(error).toMatchObject({ reason: 'admission_refused', info: { status: 503, attempts: 4, session_id: 's1' } });
    expect(error.message).toBe('server refused the session with HTTP 503 4 times');
    expect(refused).toEqual([1, 2, 3, 4]);
    expect(server.upgrades).toHaveLength(4);
    expect(time.now - t0).toBeCloseTo(750, 3);
  });

  it('opens on the third attempt when the first two are refused, waiting a doubling backoff, and resets between', async () => {
    const time = new VirtualTime();
    const server = new FakeServer(time, (n) => (n < 2 ? { refuse: 503 } : { accept: () => undefined }));
    let resets = 0;
    const t0 = time.now;
    const open = admitted(
      async () => {
        const conn = server.connect('ws://fake/x', {});
        await conn.opened;
        return conn;
      },
      { policy: { retries: 5, backoff_ms: 100, max_backoff_ms: 1000 }, url: 'ws://fake/x', timers: () => time, reset: () => resets++ },
    );
    const conn = await time.run(open);
    expect(conn.isOpen).toBe(true);
    expect(resets).toBe(2);
    // 100 ms, then 200 ms.
    expect(time.now - t0).toBeCloseTo(300, 3);
  });

  it('leaves any other failure to the caller, at once', async () => {
    const time = new VirtualTime();
    const other = new TransportError('connect_failed', 'upgrade refused with HTTP 404', { url: 'u', status: 404 });
    let attempts = 0;
    const open = admitted(async () => {
      attempts++;
      throw other;
    }, { policy: NATIVE_ADMISSION, url: 'u', timers: () => time });
    await expect(time.run(open)).rejects.toBe(other);
    expect(attempts).toBe(1);
  });

  it("knows a full server's refusals: HTTP 503 at the upgrade and vLLM-Omni's resource_exhausted; backs off doubling to the cap", () => {
    expect(admissionRefusal(new TransportError('connect_failed', 'x', { url: 'u', status: 503 }))).toEqual({ http_status: 503 });
    expect(admissionRefusal(new ProtocolError('SERVER_ERROR', 'x', { server_code: 'resource_exhausted' }))).toEqual({ code: 'resource_exhausted' });
    expect(admissionRefusal(new ProtocolError('SERVER_ERROR', 'x', { server_code: 'engine_error' }))).toBeNull();
    expect([1, 2, 3, 4].map((n) => admissionBackoffMs({ retries: 4, backoff_ms: 250, max_backoff_ms: 1000 }, n))).toEqual([250, 500, 1000, 1000]);
  });
});
