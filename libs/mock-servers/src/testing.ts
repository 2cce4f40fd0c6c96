// Test servers with injected faults. Not part of the main face: import from '@duplex-bench/mock-servers/testing'.
import { createServer, type AddressInfo } from 'node:net';
import type { MockServerOptions } from './mock-options';
import { startMockServer, type MockServer } from './mock-server';
import type { MockFault } from './mock-fault';

export type { MockFault } from './mock-fault';

/** An append-echo mock that misbehaves on every session once it has taken `fault.after_appends` appends. */
export function startFaultyMock(fault: MockFault, options: MockServerOptions = {}): Promise<MockServer> {
  return startMockServer(options, fault);
}
export { selfSignedCert } from './tls.spec-helpers';

/** A TCP port free on 127.0.0.1 now (the kernel's pick, released), for a server a test or benchmark starts next. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
