/* Test helpers of the transport: a WebSocket server in virtual time whose sessions a spec scripts */
export { FakeServer } from './fake-server';
export type { FakeServerSide, FakeUpgrade } from './fake-server';
