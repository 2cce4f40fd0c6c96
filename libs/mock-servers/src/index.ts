export { startMockServer } from './mock-server';
export type { MockServer } from './mock-server';
export type { MockServerOptions, MockProfile } from './mock-options';
export type { MockStats } from './mock-stats';
export type { ModelOptions } from './model-session';
export type { OpenAIMockOptions } from './openai-mock-session';
export { startHttpStub, HTTP_STUB_DEFAULTS } from './http/http-stub';
export type { HttpStub, HttpStubKind, HttpStubOptions, HttpStubStats } from './http/http-stub';
export { startTimeServer } from './time-server';
