export { startAppendEchoMock } from './append-echo';
export type { AppendEchoOptions, MockServer, MockStats } from './append-echo';
