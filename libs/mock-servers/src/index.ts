export { startMockServer } from './mock-server';
export type { MockServerOptions, MockServer, MockStats, MockProfile } from './mock-server';
export type { ModelOptions } from './model-session';
export type { OpenAIMockOptions } from './openai-mock-session';
export { startHttpStub, HTTP_STUB_DEFAULTS } from './http/http-stub';
export type { HttpStub, HttpStubKind, HttpStubOptions, HttpStubStats } from './http/http-stub';
export { startTimeServer } from './time-server';
