import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TIME_PATH } from '@duplex-bench/protocol';

/** Wall-clock ms with sub-ms digits (Date.now() has 1 ms steps): the wall at start plus monotonic time since. */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

/**
 * The reference clock alone: `GET /duplex-bench/time` answers `{"epoch_ms": …}`. Shards on other hosts
 * measure their offsets against it (`run --time-url`); run it on the host of a server that has none.
 */
export async function startTimeServer(host: string, port: number): Promise<{ url: string; answered(): number; close(): Promise<void> }> {
  let answered = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === TIME_PATH) {
      answered++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"epoch_ms":${wallClockMs()}}`);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}${TIME_PATH}`,
    answered: () => answered,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
