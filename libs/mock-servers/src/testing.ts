// Test servers with injected faults. Not part of the main face: import from '@duplex-bench/mock-servers/testing'.
import type { MockServerOptions } from './mock-options';
import { startMockServer, type MockServer } from './mock-server';
import type { MockFault } from './mock-fault';

export type { MockFault } from './mock-fault';

/** An append-echo mock that misbehaves on every session once it has taken `fault.after_appends` appends. */
export function startFaultyMock(fault: MockFault, options: MockServerOptions = {}): Promise<MockServer> {
  return startMockServer(options, fault);
}
export { selfSignedCert } from './tls.spec-helpers';
