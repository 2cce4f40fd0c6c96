import { get } from 'node:http';
import { startTimeServer } from './time-server';

function fetchText(url: string): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

describe('the reference clock (serve --protocol time)', () => {
  it('answers GET /duplex-bench/time with the wall clock to sub-millisecond digits, and nothing else', async () => {
    const clock = await startTimeServer('127.0.0.1', 0);
    try {
      const before = Date.now();
      const { status, body } = await fetchText(clock.url);
      const after = Date.now();
      expect(status).toBe(200);
      const epoch_ms = (JSON.parse(body) as { epoch_ms: number }).epoch_ms;
      // performance.timeOrigin + now() and Date.now() may part by a millisecond or so over a process's life.
      expect(epoch_ms).toBeGreaterThan(before - 5);
      expect(epoch_ms).toBeLessThan(after + 5);
      expect((await fetchText(clock.url.replace('/duplex-bench/time', '/v1/realtime'))).status).toBe(404);
      expect(clock.answered()).toBe(1);
    } finally {
      await clock.close();
    }
  });
});
